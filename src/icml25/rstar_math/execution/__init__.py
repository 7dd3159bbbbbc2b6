"""Running a step's code: the in-process safe-arithmetic executor and the OS-isolated subprocess sandbox (with its bootstrap)."""
