"""BabyAI single-room worlds as symbolic states: state extraction, the goal grammar, goal tests and text rendering.

The state of a ``BabyAI-PickupLoc-v0`` room (8 x 8 cells with walls, 6 x 6 interior) is fully observed and kept as a
hashable :class:`SymbolicState`: the agent's pose, the carried object and the list of objects on the floor. Goals
are BabyAI-grammar strings ``"go to the <colour> <type>"`` / ``"pick up the <colour> <type>"`` (TEDUO §4, spec §6).
"""

from __future__ import annotations

import contextlib
import io
from typing import Any, NamedTuple

from icml25.core.validation import check_int

__all__ = ["COLOURS", "TYPES", "VERBS", "ACTIONS", "SymbolicState", "Goal", "parse_goal", "goal_reached",
           "relative_position", "front_cell", "describe_state", "state_from_env", "make_env", "reset_env",
           "all_goal_strings", "HELD_OUT_PAIRS"]

#: minigrid's colour names, in its index order
COLOURS = ("red", "green", "blue", "purple", "yellow", "grey")
#: the object types of BabyAI-PickupLoc
TYPES = ("key", "ball", "box")
#: goal verbs (spec §6)
VERBS = ("go to", "pick up")
#: the action subset used (minigrid indices 0..3: left, right, forward, pickup)
ACTIONS = ("left", "right", "forward", "pickup")
#: spec §6: "pick up" is held out for these colour-type pairs (their "go to" versions stay in training)
HELD_OUT_PAIRS = (("red", "key"), ("blue", "box"), ("green", "ball"), ("purple", "key"), ("yellow", "box"),
                  ("grey", "ball"), ("red", "ball"), ("blue", "key"))
ROOM = 8  # BabyAI-PickupLoc room size including the walls
_DIR_VEC = ((1, 0), (0, 1), (-1, 0), (0, -1))  # minigrid: 0 = east (+x), 1 = south (+y), 2 = west, 3 = north


class SymbolicState(NamedTuple):
    """A fully observed single-room BabyAI state (hashable).

    Attributes
    ----------
    x, y : int
        Agent cell (1..6 inside an 8 x 8 room).
    direction : int
        0 = east, 1 = south, 2 = west, 3 = north (minigrid convention).
    carrying : tuple of (colour, type) or None
        The carried object.
    objects : tuple of (colour, type, x, y)
        Objects on the floor, sorted.
    """

    x: int
    y: int
    direction: int
    carrying: tuple[str, str] | None
    objects: tuple[tuple[str, str, int, int], ...]


class Goal(NamedTuple):
    """A parsed goal: verb (``"go to"``/``"pick up"``), colour and object type."""

    verb: str
    colour: str
    type: str

    @property
    def text(self) -> str:
        """The goal string, e.g. ``"pick up the red key"``."""
        return f"{self.verb} the {self.colour} {self.type}"


def parse_goal(goal: Any) -> Goal:
    """Parse a BabyAI goal string (or pass a :class:`Goal` through).

    Parameters
    ----------
    goal : str or Goal
        ``"go to the <colour> <type>"`` or ``"pick up the <colour> <type>"`` (case and spacing are normalised).

    Returns
    -------
    Goal

    Examples
    --------
    >>> parse_goal("Pick up the red  key")
    Goal(verb='pick up', colour='red', type='key')
    """
    if isinstance(goal, Goal):
        return goal
    if not isinstance(goal, str):
        raise TypeError(f"goal must be a string like 'go to the red key', got {type(goal).__name__}")
    words = goal.lower().replace(".", " ").split()
    if len(words) != 5 or " ".join(words[:2]) not in VERBS or words[2] != "the":
        raise ValueError(f"goal must read '<go to|pick up> the <colour> <type>', got {goal!r}")
    colour, typ = words[3], words[4]
    if colour not in COLOURS:
        raise ValueError(f"goal {goal!r} names the colour {colour!r}, which does not exist; colours: {COLOURS}")
    if typ not in TYPES:
        raise ValueError(f"goal {goal!r} names the object type {typ!r}, which does not exist; types: {TYPES}")
    return Goal(" ".join(words[:2]), colour, typ)


def all_goal_strings() -> list[str]:
    """The 36 goal strings of spec §6 (2 verbs x 6 colours x 3 types)."""
    return [f"{v} the {c} {t}" for v in VERBS for c in COLOURS for t in TYPES]


def front_cell(state: SymbolicState) -> tuple[int, int]:
    """The cell the agent faces."""
    dx, dy = _DIR_VEC[state.direction]
    return state.x + dx, state.y + dy


def relative_position(state: SymbolicState, x: int, y: int) -> tuple[int, int]:
    """Position of cell ``(x, y)`` in the agent's frame: ``(forward, right)`` steps."""
    check_int(x, "x")
    check_int(y, "y")
    dx, dy = _DIR_VEC[state.direction]
    rx, ry = -dy, dx  # minigrid's right_vec
    px, py = x - state.x, y - state.y
    return px * dx + py * dy, px * rx + py * ry


def goal_reached(state: SymbolicState, goal: Any) -> bool:
    """The rule judge (minigrid's GoTo/Pickup verifiers): facing the object (go to) or carrying it (pick up)."""
    g = parse_goal(goal)
    if g.verb == "pick up":
        return state.carrying == (g.colour, g.type)
    fx, fy = front_cell(state)
    return any(c == g.colour and t == g.type and x == fx and y == fy for c, t, x, y in state.objects)


def describe_state(state: SymbolicState) -> str:
    """Text rendering in the BabyAI-Text style: every object with its position in the agent's frame.

    Examples
    --------
    >>> s = SymbolicState(2, 3, 0, None, (("red", "key", 4, 2),))
    >>> describe_state(s)
    'red key 2 forward 1 left; ahead free; carrying nothing'
    """
    parts = []
    for c, t, x, y in state.objects:
        f, r = relative_position(state, x, y)
        side = f"{r} right" if r > 0 else f"{-r} left" if r < 0 else "0 side"
        parts.append(f"{c} {t} {f} forward {side}")
    fx, fy = front_cell(state)
    wall = not (1 <= fx <= ROOM - 2 and 1 <= fy <= ROOM - 2)
    obj = any(x == fx and y == fy for _, _, x, y in state.objects)
    ahead = "wall" if wall else "object" if obj else "free"
    carry = "nothing" if state.carrying is None else " ".join(state.carrying)
    return "; ".join(parts + [f"ahead {ahead}", f"carrying {carry}"])


def state_from_env(env: Any) -> SymbolicState:
    """Read the :class:`SymbolicState` of a minigrid env (wrapped or not)."""
    u = env.unwrapped
    objs = []
    width = u.grid.width
    for i, o in enumerate(u.grid.grid):
        if o is not None and o.type != "wall":
            objs.append((o.color, o.type, i % width, i // width))
    carry = None if u.carrying is None else (u.carrying.color, u.carrying.type)
    return SymbolicState(int(u.agent_pos[0]), int(u.agent_pos[1]), int(u.agent_dir), carry, tuple(sorted(objs)))


def make_env(env_id: str = "BabyAI-PickupLoc-v0") -> Any:
    """A gymnasium BabyAI env (minigrid), its registration messages silenced."""
    import warnings

    import gymnasium as gym

    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        import minigrid  # noqa: F401  (registers the BabyAI envs)

        return gym.make(env_id)


def reset_env(env: Any, seed: int) -> SymbolicState:
    """Reset ``env`` with ``seed`` (silencing BabyAI's 'Sampling rejected' prints) and return the state."""
    check_int(seed, "seed", low=0)
    with contextlib.redirect_stdout(io.StringIO()):
        env.reset(seed=int(seed))
    return state_from_env(env)
