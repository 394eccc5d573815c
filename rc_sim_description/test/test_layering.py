"""The layering of docs/architecture.md, enforced on every module and test of the five packages.

Parses (never imports) every ``.py`` file under the packages, their ``launch/`` and ``test/``
folders, and reports, as ``file:line: ...``:

* an import of a package that is not below the importer (``rc_sim_calibration -> rc_sim_engine
  -> {rc_sim_control, rc_sim_sensors} -> rc_sim_description``; control and sensors are siblings
  and do not import each other), including a module named in a string (``'rc_sim_x.cli'``), the
  way an import by name hides a dependency;
* an import of ROS (rclpy, launch, ament, ``*_msgs`` ...) outside ``<pkg>/<pkg>/nodes/`` and
  ``<pkg>/launch/``, except in a test scope (module, class or function, or one enclosing it) that
  calls ``pytest.importorskip`` on a ROS module first;
* an import circle between modules (module-level and function-level imports; not the
  ``if TYPE_CHECKING:`` ones, which never run), with the circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
import re

REPO = Path(__file__).resolve().parents[2]

# package -> the packages it may import (besides itself): docs/architecture.md
ALLOWED: dict[str, frozenset[str]] = {
    'rc_sim_description': frozenset(),
    'rc_sim_control': frozenset({'rc_sim_description'}),
    'rc_sim_sensors': frozenset({'rc_sim_description'}),
    'rc_sim_engine': frozenset({'rc_sim_control', 'rc_sim_sensors', 'rc_sim_description'}),
    'rc_sim_calibration': frozenset({'rc_sim_engine', 'rc_sim_control', 'rc_sim_sensors',
                                     'rc_sim_description'}),
}
PACKAGES = tuple(ALLOWED)
ROS_MODULES = frozenset({
    'rclpy', 'launch', 'launch_ros', 'launch_testing', 'launch_testing_ros', 'launch_pytest',
    'rosidl_runtime_py', 'rosidl_parser', 'tf2_ros', 'message_filters', 'rosgraph',
    'ros2cli', 'rcl_interfaces'})
MODULE_STRING = re.compile(r'^(rc_sim_[a-z]+)(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?$')


@dataclass(frozen=True)
class Import:
    module: str        # absolute dotted name (relative imports resolved)
    names: tuple[str, ...]  # the names of ``from module import a, b``
    line: int
    ros_allowed: bool  # inside a test scope that importorskips a ROS module
    type_only: bool = False  # under ``if TYPE_CHECKING:`` (never executed: no circle)


def is_ros(module: str) -> bool:
    """True for ROS client libraries, launch, the ament index and message/service packages."""
    top = module.split('.')[0]
    return (top in ROS_MODULES or top.startswith('ament_') or top.endswith(('_msgs', '_srvs'))
            or module.endswith(('.msg', '.srv', '.action')))


def module_name(root: Path, path: Path) -> str:
    """Dotted name of ``path``: ``pkg/pkg/a/b.py`` -> ``pkg.a.b``; tests ``pkg.test.test_x``
    (the name pytest's importlib mode gives them)."""
    rel = path.relative_to(root)
    parts = list(rel.with_suffix('').parts)
    if len(parts) > 1 and parts[0] == parts[1]:
        parts = parts[1:]
    if parts[-1] == '__init__':
        parts = parts[:-1]
    return '.'.join(parts)


def _skips_ros(scope: ast.AST) -> bool:
    """``scope`` itself (not a nested def) calls ``pytest.importorskip('<ROS module>')``."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == 'importorskip' and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str) and is_ros(node.args[0].value)):
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _is_type_checking(test: ast.expr) -> bool:
    return ((isinstance(test, ast.Name) and test.id == 'TYPE_CHECKING')
            or (isinstance(test, ast.Attribute) and test.attr == 'TYPE_CHECKING'))


def imports(tree: ast.Module, name: str, is_package: bool, is_test: bool) -> list[Import]:
    """Every import of the module ``name`` (at any depth), relative ones made absolute."""
    found: list[Import] = []
    base = name.split('.') if is_package else name.split('.')[:-1]

    def visit(node: ast.AST, skipped: bool, typing: bool) -> None:
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            skipped = skipped or (is_test and _skips_ros(node))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, skipped, True)
            for child in node.orelse:
                visit(child, skipped, typing)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(alias.name, (), node.lineno, skipped, typing))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[:len(base) - node.level + 1]
                module = '.'.join(anchor + ([node.module] if node.module else []))
            else:
                module = node.module or ''
            found.append(Import(module, tuple(a.name for a in node.names), node.lineno,
                                skipped, typing))
        for child in ast.iter_child_nodes(node):
            visit(child, skipped, typing)

    visit(tree, False, False)
    return found


def module_strings(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """String constants that name a module of the suite (``'rc_sim_x.cli'``), docstrings aside."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings and MODULE_STRING.match(node.value)):
            yield node.value, node.lineno


def python_files(root: Path) -> list[Path]:
    """Every .py file of the five packages: code, launch files, tests (not build output)."""
    files = []
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob('*.py')):
            parts = path.relative_to(root / pkg).parts
            if not any(p.startswith('.') or p in ('build', 'install', '__pycache__')
                       or p.endswith('.egg-info') for p in parts):
                files.append(path)
    return files


@dataclass
class Source:
    path: Path
    rel: str
    package: str
    name: str
    imports: list[Import]
    strings: list[tuple[str, int]]
    ros_place: bool  # nodes/ or launch/
    is_test: bool


def load(root: Path, files: Iterable[Path]) -> list[Source]:
    sources = []
    for path in files:
        rel_parts = path.relative_to(root).parts
        pkg = rel_parts[0]
        tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
        is_test = len(rel_parts) > 1 and rel_parts[1] == 'test'
        name = module_name(root, path)
        sources.append(Source(
            path=path, rel='/'.join(rel_parts), package=pkg, name=name,
            imports=imports(tree, name, path.name == '__init__.py', is_test),
            strings=list(module_strings(tree)),
            ros_place=(rel_parts[1:3] == (pkg, 'nodes') or rel_parts[1:2] == ('launch',)),
            is_test=is_test))
    return sources


def layer_violations(sources: list[Source]) -> list[str]:
    """``file:line: ...`` for each import (or module string) of a package not below the file's."""
    out = []
    for s in sources:
        allowed = ALLOWED[s.package] | {s.package}
        named = [(i.module, i.line) for i in s.imports] + s.strings
        for module, line in named:
            top = module.split('.')[0]
            if top in ALLOWED and top not in allowed:
                out.append(f'{s.rel}:{line}: {s.package} must not import {module} '
                           f'({top} is not below it in docs/architecture.md)')
    return out


def ros_violations(sources: list[Source]) -> list[str]:
    """``file:line: ...`` for each ROS import outside nodes/, launch/ and ROS-skipping tests."""
    out = []
    for s in sources:
        if s.ros_place:
            continue
        for i in s.imports:
            if is_ros(i.module) and not (s.is_test and i.ros_allowed):
                out.append(f'{s.rel}:{i.line}: ROS import {i.module} outside nodes/ and '
                           'launch/ (tests: pytest.importorskip it first)')
    return out


def import_graph(sources: list[Source]) -> dict[str, dict[str, str]]:
    """module -> {imported module of the suite: 'file:line' of the first such import}."""
    known = {s.name for s in sources}
    graph: dict[str, dict[str, str]] = {}
    for s in sources:
        edges: dict[str, str] = {}
        for i in s.imports:
            if i.type_only:
                continue
            for target in (i.module, *(f'{i.module}.{n}' for n in i.names)):
                # a package is imported before its modules: no circle through an ancestor
                if target in known and not (s.name == target or s.name.startswith(target + '.')):
                    edges.setdefault(target, f'{s.rel}:{i.line}')
        graph[s.name] = edges
    return graph


def strongly_connected(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def cycle_violations(graph: dict[str, dict[str, str]]) -> list[str]:
    """One shortest circle per strongly connected component: ``a -> b (file:line) -> a (...)``."""
    out = []
    for comp in strongly_connected(graph):
        members, start = set(comp), comp[0]
        previous: dict[str, str] = {}
        frontier = [start]
        while frontier and start not in previous:  # breadth-first back to the start
            nxt = []
            for v in frontier:
                for w in sorted(graph[v]):
                    if w in members and w not in previous:
                        previous[w] = v
                        nxt.append(w)
            frontier = nxt
        path = [start]
        while True:
            path.append(previous[path[-1]])
            if path[-1] == start:
                break
        path.reverse()
        steps = ' -> '.join(f'{b} ({graph[a][b]})' for a, b in pairwise(path))
        out.append(f'import circle: {start} -> {steps}')
    return out


def check(root: Path) -> list[str]:
    sources = load(root, python_files(root))
    return (sorted(layer_violations(sources) + ros_violations(sources))
            + cycle_violations(import_graph(sources)))


# ------------------------------------------------------------------ rooms of rc_sim_engine
#: room of rc_sim_engine -> the rooms it may import (docs/architecture.md, "The engine's rooms");
#: bottom first. A room's own modules import each other freely (no circles: see above).
_BELOW_OUTPUT = ('compiled', 'vehicle', 'world', 'sim', 'racing', 'scenarios')
ROOMS: dict[str, frozenset[str]] = {
    'compiled': frozenset(),
    'vehicle': frozenset({'compiled'}),
    'world': frozenset({'compiled'}),
    'sim': frozenset({'compiled', 'vehicle', 'world'}),
    'racing': frozenset({'compiled', 'vehicle', 'world', 'sim'}),
    'scenarios': frozenset({'compiled', 'vehicle', 'world', 'sim'}),
    'output': frozenset(_BELOW_OUTPUT),
    'live': frozenset({*_BELOW_OUTPUT, 'output'}),
    'nodes': frozenset({*_BELOW_OUTPUT, 'output', 'live'}),
    'campaign': frozenset({*_BELOW_OUTPUT, 'output', 'live', 'nodes'}),
    'cli': frozenset({*_BELOW_OUTPUT, 'output', 'live', 'nodes', 'campaign'}),
}
ENGINE = 'rc_sim_engine'
PACKAGE_FILES = frozenset({'__init__.py', '__main__.py', 'py.typed'})


def room_of(module: str) -> str | None:
    """``rc_sim_engine.<room>...`` -> room (None for the package itself and its tests)."""
    parts = module.split('.')
    return parts[1] if len(parts) > 1 and parts[0] == ENGINE and parts[1] != 'test' else None


def room_violations(sources: list[Source]) -> list[str]:
    """``file:line: ...`` for each import by an engine module of a room not below its own
    (imports at any depth, type-only ones included: they couple the rooms all the same)."""
    out = []
    for s in sources:
        if not s.rel.startswith(f'{ENGINE}/{ENGINE}/'):
            continue  # the engine's tests, launch files and setup.py are not in rooms
        own = room_of(s.name)
        if own is None or own == '__main__':
            continue  # the package's own files (__init__, __main__) sit above every room
        if own not in ROOMS:
            out.append(f'{s.rel}: module outside a room (rooms: {", ".join(ROOMS)})')
            continue
        for i in s.imports:
            targets = [i.module] if room_of(i.module) else [f'{i.module}.{n}' for n in i.names]
            for target in targets:
                room = room_of(target)
                if room is not None and room != own and room not in ROOMS[own]:
                    out.append(f'{s.rel}:{i.line}: room {own} must not import {target} '
                               f'({room} is not below {own} in docs/architecture.md)')
    return out


def layout_problems(package_dir: Path) -> list[str]:
    """Files of the engine's package folder outside a room; rooms without an ``__init__``
    that states its job and lists its public names."""
    out = []
    for path in sorted(package_dir.iterdir()):
        if path.name.startswith(('.', '__pycache__')):
            continue
        if path.is_file():
            if path.name not in PACKAGE_FILES:
                out.append(f'{path.name}: a module outside a room')
            continue
        if path.name not in ROOMS:
            out.append(f'{path.name}/: not a room of docs/architecture.md')
            continue
        init = path / '__init__.py'
        text = init.read_text(encoding='utf-8') if init.is_file() else ''
        tree = ast.parse(text) if text else None
        if tree is None or ast.get_docstring(tree) is None:
            out.append(f'{path.name}/__init__.py: missing, or without a docstring stating the '
                       "room's job")
        elif '__all__' not in text:
            out.append(f"{path.name}/__init__.py: no __all__ (the room's public names)")
    return out


# --------------------------------------------------------------------------- the tests
def test_the_suite_respects_its_layers() -> None:
    files = python_files(REPO)
    assert len(files) > 200 and any(f.name == 'run_setup.py' for f in files)
    problems = check(REPO)
    assert problems == [], '\n' + '\n'.join(problems)


def test_the_engine_lives_in_rooms_that_only_import_downwards() -> None:
    """Every engine module sits in a room (docs/architecture.md) and imports only rooms below
    its own."""
    sources = [s for s in load(REPO, python_files(REPO)) if s.package == ENGINE]
    assert sum(1 for s in sources if room_of(s.name) == 'vehicle') > 10
    problems = layout_problems(REPO / ENGINE / ENGINE) + room_violations(sources)
    assert problems == [], '\n' + '\n'.join(problems)


def test_the_room_checker_reports_upward_imports_and_strays(tmp_path: Path) -> None:
    pkg = f'{ENGINE}/{ENGINE}'
    _write(tmp_path, f'{pkg}/__init__.py', '"""Package."""\n')
    _write(tmp_path, f'{pkg}/__main__.py', 'from rc_sim_engine.cli import main\n')
    _write(tmp_path, f'{pkg}/vehicle/__init__.py', '"""Cars."""\n__all__ = []\n')
    _write(tmp_path, f'{pkg}/vehicle/car.py',
           'from rc_sim_engine.compiled import cache\n'
           'def f():\n    from rc_sim_engine.sim.simulator import Simulator\n')
    _write(tmp_path, f'{pkg}/world/__init__.py', '__all__ = []\n')
    _write(tmp_path, f'{pkg}/world/sdf.py', 'from rc_sim_engine.vehicle import car\n')
    _write(tmp_path, f'{pkg}/sim/simulator.py', 'from rc_sim_engine import world\n')
    _write(tmp_path, f'{pkg}/stray.py', '')
    _write(tmp_path, f'{pkg}/misc/x.py', '')
    sources = load(tmp_path, sorted((tmp_path / ENGINE).rglob('*.py')))
    assert layout_problems(tmp_path / pkg) == [
        'misc/: not a room of docs/architecture.md',
        "sim/__init__.py: missing, or without a docstring stating the room's job",
        'stray.py: a module outside a room',
        "world/__init__.py: missing, or without a docstring stating the room's job"]
    assert room_violations(sources) == [
        f'{pkg}/misc/x.py: module outside a room (rooms: {", ".join(ROOMS)})',
        f'{pkg}/stray.py: module outside a room (rooms: {", ".join(ROOMS)})',
        f'{pkg}/vehicle/car.py:3: room vehicle must not import rc_sim_engine.sim.simulator '
        '(sim is not below vehicle in docs/architecture.md)',
        f'{pkg}/world/sdf.py:1: room world must not import rc_sim_engine.vehicle '
        '(vehicle is not below world in docs/architecture.md)']


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding='utf-8')


def test_the_checker_reports_each_kind_of_violation(tmp_path: Path) -> None:
    """A synthetic tree with one violation of each rule (and allowed look-alikes)."""
    for pkg in PACKAGES:
        _write(tmp_path, f'{pkg}/{pkg}/__init__.py', '"""Package."""\n')
    _write(tmp_path, 'rc_sim_description/rc_sim_description/bad.py',
           '"""Mentions rc_sim_engine.cli in a docstring: fine."""\n'
           'import os\n'
           'def f():\n'
           '    from rc_sim_engine.cli import main\n'
           "PLUGINS = ('rc_sim_calibration.cli',)\n"
           'import rclpy\n')
    _write(tmp_path, 'rc_sim_control/rc_sim_control/x.py',
           'from rc_sim_sensors import lidar\nfrom rc_sim_description import errors\n')
    _write(tmp_path, 'rc_sim_engine/rc_sim_engine/nodes/n.py',
           'import rclpy\nfrom std_msgs.msg import Float64\nfrom rc_sim_control import x\n')
    _write(tmp_path, 'rc_sim_engine/launch/a.launch.py', 'from launch import LaunchDescription\n')
    _write(tmp_path, 'rc_sim_engine/rc_sim_engine/a.py',
           'from rc_sim_engine import b\nfrom ament_index_python.packages import get\n')
    _write(tmp_path, 'rc_sim_engine/rc_sim_engine/b.py', 'from . import c\n')
    _write(tmp_path, 'rc_sim_engine/rc_sim_engine/c.py',
           'def late():\n    import rc_sim_engine.a\n')
    _write(tmp_path, 'rc_sim_engine/rc_sim_engine/d.py',  # type-only: no circle
           'from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rc_sim_engine.e import E\n')
    _write(tmp_path, 'rc_sim_engine/rc_sim_engine/e.py', 'from rc_sim_engine import d\n')
    _write(tmp_path, 'rc_sim_sensors/test/test_node.py',
           'import pytest\n'
           'def test_ros():\n'
           "    pytest.importorskip('rclpy')\n"
           '    from sensor_msgs.msg import LaserScan\n'
           'def test_not_skipped():\n'
           '    from nav_msgs.msg import Odometry\n')
    problems = check(tmp_path)
    assert problems == [
        'rc_sim_control/rc_sim_control/x.py:1: rc_sim_control must not import rc_sim_sensors '
        '(rc_sim_sensors is not below it in docs/architecture.md)',
        'rc_sim_description/rc_sim_description/bad.py:4: rc_sim_description must not import '
        'rc_sim_engine.cli (rc_sim_engine is not below it in docs/architecture.md)',
        'rc_sim_description/rc_sim_description/bad.py:5: rc_sim_description must not import '
        'rc_sim_calibration.cli (rc_sim_calibration is not below it in docs/architecture.md)',
        'rc_sim_description/rc_sim_description/bad.py:6: ROS import rclpy outside nodes/ and '
        'launch/ (tests: pytest.importorskip it first)',
        'rc_sim_engine/rc_sim_engine/a.py:2: ROS import ament_index_python.packages outside '
        'nodes/ and launch/ (tests: pytest.importorskip it first)',
        'rc_sim_sensors/test/test_node.py:6: ROS import nav_msgs.msg outside nodes/ and '
        'launch/ (tests: pytest.importorskip it first)',
        'import circle: rc_sim_engine.a -> rc_sim_engine.b (rc_sim_engine/rc_sim_engine/a.py:1)'
        ' -> rc_sim_engine.c (rc_sim_engine/rc_sim_engine/b.py:1)'
        ' -> rc_sim_engine.a (rc_sim_engine/rc_sim_engine/c.py:2)',
    ]


def test_module_names_follow_the_import_system(tmp_path: Path) -> None:
    assert module_name(tmp_path, tmp_path / 'p/p/a/__init__.py') == 'p.a'
    assert module_name(tmp_path, tmp_path / 'p/p/a/b.py') == 'p.a.b'
    assert module_name(tmp_path, tmp_path / 'p/test/test_x.py') == 'p.test.test_x'
    assert strongly_connected({'a': {'b': ''}, 'b': {}}) == []
