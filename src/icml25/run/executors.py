"""Where (paper, seed) tasks run: one after another, in a local process pool, or as Ray tasks (issue 32).

A :class:`Task` is one seed of one paper with its own output folder. :func:`run_task` runs it anywhere (this
process, a pool worker, a Ray worker): it sets the task's torch/BLAS thread count (:func:`task_threads`: the
config's ``threads``/``torch_threads`` field, else the registry's ``threads=``) and restores it after, seeds, runs
it, writes its ``report.json`` and returns a :class:`TaskResult`; it never raises for an error inside the
reproduction (the traceback goes to ``<folder>/error.log``). :func:`execute` yields the results as tasks finish, whichever executor:

- ``serial``: in this process, in order;
- ``process``: a :class:`concurrent.futures.ProcessPoolExecutor` of ``jobs`` spawned workers;
- ``ray``: one Ray task per (paper, seed), declaring ``num_cpus`` = the reproduction's thread count, on a local Ray
  instance (``ray.init(num_cpus=jobs)``), on the instance already initialised in this process, or on a cluster
  (``ray_address``: ``"auto"`` or ``"ray://host:10001"``).

Every task computes the same numbers whichever executor ran it: same seed, same thread count, same code path.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import pickle
import platform
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml25.core.threads import thread_limits

__all__ = ["EXECUTORS", "Task", "TaskResult", "run_task", "execute", "finished_report", "task_threads"]

#: the executors ``icml25 reproduce --executor`` accepts
EXECUTORS = ("serial", "process", "ray")



@dataclass(frozen=True)
class Task:
    """One seed of one paper.

    Attributes
    ----------
    slug : str
        The paper.
    seed : int
        The seed of this task.
    scale : str
        ``"quick"`` or ``"full"``.
    folder : str
        The task's own output folder (the reproduction's ``out``; ``report.json`` and ``error.log`` go there).
    overrides : tuple of (str, str)
        ``--set`` overrides, applied to the scale's config preset inside the task.
    threads : int
        torch/BLAS threads of the task (:func:`task_threads`: the config's ``threads`` or ``torch_threads`` field,
        else the reproduction's ``threads=``); a Ray task reserves that many CPUs.
    package_root, root_package : str
        Where the reproductions are discovered (:data:`icml25.core.registry.PACKAGE_ROOT` and ``ROOT_PACKAGE``
        of the process that made the task), so that a worker finds the same ones.
    sys_path : tuple of str
        Folders a worker puts first on ``sys.path`` (the parent of ``package_root``).
    context : tuple of (str, object)
        What ``error.log`` records besides the task (the run's seeds, ...).
    """

    slug: str
    seed: int
    scale: str
    folder: str
    overrides: tuple[tuple[str, str], ...] = ()
    threads: int = 1
    package_root: str = ""
    root_package: str = ""
    sys_path: tuple[str, ...] = ()
    context: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        """``"<slug> seed <k>"``."""
        return f"{self.slug} seed {self.seed}"


@dataclass
class TaskResult:
    """What a task gives back.

    ``status`` is ``"ok"`` (``report`` holds the dict written to ``report.json``), ``"skipped"`` (a finished
    report of the same scale, seed and config was found; ``report`` holds it), ``"internal"`` (a bug inside the
    reproduction: ``error`` is ``"<type>: <message>"``, ``traceback`` the full text, ``log_path`` the
    ``error.log``) or ``"user"`` (a user error such as missing data or a time budget: ``error`` is its message).
    ``exception`` is the original exception when it survived the trip back from the worker (for ``--debug``);
    ``report_obj`` the :class:`~icml25.core.claims.Report` itself when the task ran in this process.
    """

    task: Task
    status: str
    report: dict[str, Any] | None = None
    wall_time_s: float = 0.0
    error: str = ""
    traceback: str = ""
    log_path: str | None = None
    exception: BaseException | None = field(default=None, repr=False)
    #: the Report object itself (figures included) when the task ran in this process
    report_obj: Any = field(default=None, repr=False)


def _use_package(task: Task) -> None:
    """Point the registry of this process at the task's package (a worker of a test's scratch package)."""
    from icml25.core import registry

    for p in reversed(task.sys_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    if task.package_root and str(registry.PACKAGE_ROOT) != task.package_root:
        registry.PACKAGE_ROOT = Path(task.package_root)
    if task.root_package and registry.ROOT_PACKAGE != task.root_package:
        registry.ROOT_PACKAGE = task.root_package



#: config fields that, when a paper's Config has one, give the thread count of its tasks (else the registry's)
THREAD_FIELDS = ("threads", "torch_threads")


def task_threads(config: Any, default: int) -> int:
    """The torch/BLAS thread count of a task: the config's own ``threads`` or ``torch_threads`` field when it has
    one (an integer >= 1), else ``default`` (the ``threads=`` of ``@reproduction``).

    ``config`` is a config object or its dict (:func:`icml25.core.config.config_to_dict`); None has no fields.
    """
    for name in THREAD_FIELDS:
        value = config.get(name) if isinstance(config, dict) else getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return default


def _set_torch_threads(threads: int) -> None:
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def _portable(exc: BaseException) -> BaseException | None:
    """``exc`` if it survives pickling (to travel back from a worker), else None."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return None
    return exc


def run_task(task: Task, in_process: bool = False) -> TaskResult:
    """Run one (paper, seed) task and write its report to ``task.folder``; never raises for the paper's errors.

    Parameters
    ----------
    task : Task
    in_process : bool
        The task runs in the caller's process (serial executor): return the original exception as it is and the
        Report object; otherwise the exception only when it pickles, and the report as a dict only.

    Returns
    -------
    TaskResult
        ``"ok"`` with the report dict (exactly the written ``report.json``), ``"user"`` for a user error raised
        inside the reproduction, ``"internal"`` for anything else (its traceback written to ``error.log``).
    """
    from icml25.core.claims import Report, Scale
    from icml25.core.config import apply_overrides, config_to_dict
    from icml25.core.errors import USER_ERRORS, one_line

    _use_package(task)
    folder = Path(task.folder)
    t_start = time.perf_counter()
    config: Any = None
    keep = (lambda e: e) if in_process else _portable
    try:
        folder.mkdir(parents=True, exist_ok=True)
        from icml25.core.report import remove_stale_partials

        remove_stale_partials(folder)  # what a killed run of this task left half-written
        with thread_limits(task.threads), contextlib.ExitStack() as stack:  # the stack closes first
            from icml25.core.registry import get_reproduction
            from icml25.core.report import write_report
            from icml25.core.seeding import seed_everything

            entry = get_reproduction(task.slug)
            scale = Scale.parse(task.scale)
            config = apply_overrides(entry.default_config(scale), dict(task.overrides))
            threads = task_threads(config, task.threads)  # the driver usually put the config's count in the task
            if threads != task.threads:
                stack.enter_context(thread_limits(threads))
            if "torch" in entry.extras:
                # a paper that imports torch only inside its run would otherwise draw from an unseeded global
                # generator (seed_everything seeds torch only once imported): the same seed gave other numbers
                import torch  # noqa: F401
            _set_torch_threads(threads)  # torch may have come with the paper's module
            seed_everything(task.seed)
            t0 = time.perf_counter()
            rep = entry.func(scale=scale, seed=task.seed, out=folder, config=config)  # type: ignore[misc]
            if not isinstance(rep, Report):
                raise TypeError(f"reproduction {task.slug!r} returned {type(rep).__name__}, expected a Report")
            rep.wall_time_s = time.perf_counter() - t0
            rep.scale = scale
            rep.seed = task.seed
            rep.config = {**config_to_dict(config), **rep.config}
            write_report(rep, folder)
            data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        return TaskResult(task, "ok", report=data, wall_time_s=time.perf_counter() - t_start,
                          report_obj=rep if in_process else None)
    except USER_ERRORS as exc:
        return TaskResult(task, "user", error=one_line(str(exc)), wall_time_s=time.perf_counter() - t_start,
                          exception=keep(exc))
    except Exception as exc:
        context = {"slug": task.slug, "scale": task.scale, "seed": task.seed, **dict(task.context),
                   "overrides": dict(task.overrides), "threads": task.threads,
                   "config": config_to_dict(config) if config is not None else "(not built)"}
        log = write_error_log(folder, exc, context)
        return TaskResult(task, "internal", error=f"{type(exc).__name__}: {one_line(str(exc))}",
                          traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
                          log_path=str(log) if log else None, wall_time_s=time.perf_counter() - t_start,
                          exception=keep(exc))


def finished_report(task: Task, config: dict[str, Any]) -> dict[str, Any] | None:
    """The ``report.json`` in ``task.folder`` when it is of the task's scale, seed and ``config``; else None.

    ``config`` is the run's configuration as :func:`icml25.core.config.config_to_dict` gives it; every one of its
    fields must be equal in the report's ``config``. A report that cannot be read (or is of an older claim
    contract) does not count.
    """
    from icml25.core.claims import Report

    path = Path(task.folder) / "report.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("scale") != task.scale or data.get("seed") != task.seed:
        return None
    found = data.get("config") or {}
    if any(k not in found or found[k] != v for k, v in config.items()):
        return None
    try:
        Report.from_dict(data)
    except (ValueError, KeyError, TypeError):
        return None
    return data


def _crashed(task: Task, exc: BaseException) -> TaskResult:
    """A task whose worker died or whose result could not come back: an internal error, logged by the driver."""
    from icml25.core.errors import one_line

    folder = Path(task.folder)
    folder.mkdir(parents=True, exist_ok=True)
    log = write_error_log(folder, exc, {"slug": task.slug, "scale": task.scale, "seed": task.seed,
                                        "note": "the worker running this task failed"})
    return TaskResult(task, "internal", error=f"{type(exc).__name__}: {one_line(str(exc))}",
                      traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
                      log_path=str(log) if log else None, exception=_portable(exc))


def _ensure_log(result: TaskResult) -> TaskResult:
    """Write a failed task's ``error.log`` on this machine when the worker's copy is not here (another node)."""
    if result.status != "internal":
        return result
    path = Path(result.log_path) if result.log_path else Path(result.task.folder) / "error.log"
    if not path.exists():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"icml25 internal error in {result.task.name} (written by the driver)\n\n"
                            f"{result.traceback}", encoding="utf-8")
            result.log_path = str(path)
        except OSError:
            result.log_path = None
    return result


def execute(tasks: Iterable[Task], executor: str = "serial", jobs: int | None = None,
            ray_address: str | None = None, on_start: Callable[[Task], None] | None = None) -> Iterator[TaskResult]:
    """Run ``tasks`` with ``executor`` and yield each :class:`TaskResult` as its task finishes.

    Parameters
    ----------
    tasks : iterable of Task
    executor : str
        ``"serial"``, ``"process"`` or ``"ray"``.
    jobs : int, optional
        ``process``: number of worker processes (default: the CPU count divided by the largest task's
        threads). ``ray``: the CPUs of a local Ray instance started here (ignored for a cluster or an instance
        already initialised in this process).
    ray_address : str, optional
        ``ray``: the address of an existing cluster (``"auto"``, ``"ray://host:10001"``); None starts a local
        instance unless this process already initialised Ray.
    on_start : callable, optional
        ``serial``: called with each task just before it runs (the other executors start tasks on their own).

    Closing the generator early (an exception in the consumer) cancels the tasks not yet started.
    """
    tasks = list(tasks)
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    if not tasks:
        return
    if executor == "serial":
        for t in tasks:
            if on_start is not None:
                on_start(t)
            yield run_task(t, in_process=True)
    elif executor == "process":
        yield from _execute_process(tasks, jobs)
    else:
        yield from _execute_ray(tasks, jobs, ray_address)


def _execute_process(tasks: list[Task], jobs: int | None) -> Iterator[TaskResult]:
    """A spawned process pool; the tasks of a pool broken by a dying worker are rerun once, each in its own pool."""
    from concurrent.futures.process import BrokenProcessPool

    if jobs is None:
        jobs = max(1, (os.cpu_count() or 1) // max(t.threads for t in tasks))
    broken: list[Task] = []
    for task, result in _pool_results(tasks, jobs):
        if isinstance(result, BrokenProcessPool):
            broken.append(task)  # a worker died (killed, out of memory, a crash in C): which task did is unknown
        elif isinstance(result, BaseException):
            yield _crashed(task, result)
        else:
            yield result
    for task in broken:  # alone in a fresh pool, a task that kills its worker takes no other task with it
        for _, result in _pool_results([task], 1):
            yield _crashed(task, result) if isinstance(result, BaseException) else result


def _pool_results(tasks: list[Task], jobs: int) -> Iterator[tuple[Task, Any]]:
    """``(task, TaskResult or the exception of its future)`` as the tasks finish in a pool of ``jobs`` processes."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # spawn, not fork: a forked child would inherit the parent's torch/OpenMP thread pools and locks
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=multiprocessing.get_context("spawn"))
    futures = {pool.submit(run_task, t): t for t in tasks}
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=lambda f: tasks.index(futures[f])):
                try:
                    yield futures[f], f.result()
                except Exception as exc:  # the worker died (BrokenProcessPool) or the result did not unpickle
                    yield futures[f], exc
    except (KeyboardInterrupt, SystemExit):
        # interrupted (Ctrl-C, SIGTERM): stop the running tasks now instead of waiting for them; a task stopped
        # half-way leaves its previous report as it was (reports are written atomically)
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            with contextlib.suppress(Exception):
                proc.terminate()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _execute_ray(tasks: list[Task], jobs: int | None, ray_address: str | None) -> Iterator[TaskResult]:
    from icml25.core.optional import require

    ray = require("ray", "dist")
    started = False
    if not ray.is_initialized():
        import signal

        on_term = signal.getsignal(signal.SIGTERM)
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
        if ray_address:
            ray.init(address=ray_address, **kwargs)
        else:
            ray.init(num_cpus=jobs, **kwargs)
        started = True
        if callable(on_term):  # ray.init replaces it (SIGTERM would abort the driver): keep the CLI's clean stop
            with contextlib.suppress(ValueError):
                signal.signal(signal.SIGTERM, on_term)
    pending: list[Any] = []
    try:
        remote = ray.remote(max_retries=0)(run_task)
        # a task asking for more CPUs than the cluster has would wait forever: give it the whole cluster instead
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        refs = {remote.options(num_cpus=min(t.threads, cpus)).remote(t): t for t in tasks}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    result = ray.get(ref)
                except Exception as exc:  # the worker died, or the task could not run on the cluster
                    result = _crashed(refs[ref], exc)
                yield _ensure_log(result)
    finally:
        if started:
            ray.shutdown()
        else:
            for ref in pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref)

def write_error_log(folder: Path, exc: BaseException, context: dict[str, Any]) -> Path | None:
    """Write the full traceback of ``exc`` and the run's context to ``<folder>/error.log``; its path (None on failure)."""
    path = Path(folder) / "error.log"
    lines = [f"icml25 internal error, {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}",
             f"python {sys.version.split()[0]} on {platform.platform()}"]
    lines += [f"{k}: {v}" for k, v in context.items()]
    lines += ["", "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))]
    try:
        path.write_text("\n".join(lines), encoding="utf-8")
    except OSError:
        return None
    return path
