"""The one read helper for files doiget keeps: nothing outside the root, only regular files."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from doiget.confined import Refused, read_confined, resolve_confined


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "sub" / "inside.txt").write_bytes(b"inside")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_bytes(b"secret")
    return tmp_path / "root"


def test_a_regular_file_inside_is_read(root: Path) -> None:
    assert read_confined(root, root / "sub" / "inside.txt") == b"inside"


def test_a_root_that_is_itself_a_link_is_followed(root: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(root)
    alias = tmp_path / "alias"
    assert read_confined(alias, alias / "sub" / "inside.txt") == b"inside"


def test_a_link_to_a_file_inside_is_read_at_its_target(root: Path) -> None:
    (root / "link.txt").symlink_to(root / "sub" / "inside.txt")
    assert read_confined(root, root / "link.txt") == b"inside"


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda r, o: (r / "f").symlink_to(o / "secret.txt"), id="link-out"),
        pytest.param(
            lambda r, o: ((r / "step").symlink_to(o / "secret.txt"), (r / "f").symlink_to("step")),
            id="chain-out",
        ),
        pytest.param(lambda r, o: (r / "f").symlink_to("../outside/secret.txt"), id="relative-out"),
        pytest.param(lambda r, o: (r / "f").symlink_to(o / "missing"), id="dangling-out"),
    ],
)
def test_a_link_that_leaves_the_root_is_refused(root: Path, make: object) -> None:
    make(root, root.parent / "outside")  # type: ignore[operator]
    with pytest.raises(Refused, match=r"symbolic link .* outside"):
        read_confined(root, root / "f")
    with pytest.raises(Refused):
        resolve_confined(root, root / "f")


def test_a_directory_on_the_way_that_is_a_link_out_is_refused(root: Path) -> None:
    (root / "dir").symlink_to(root.parent / "outside")
    with pytest.raises(Refused, match="outside"):
        read_confined(root, root / "dir" / "secret.txt")


def test_a_path_that_climbs_out_by_name_is_refused(root: Path) -> None:
    with pytest.raises(Refused, match="not inside"):
        read_confined(root, root / ".." / "outside" / "secret.txt")
    with pytest.raises(Refused, match="not inside"):
        read_confined(root, root.parent / "outside" / "secret.txt")


def test_a_directory_is_refused(root: Path) -> None:
    with pytest.raises(Refused, match="is a directory"):
        read_confined(root, root / "sub")


@pytest.fixture
def fifo(root: Path) -> Iterator[Path]:
    """A FIFO in the root, with a writer that opens and closes it every 50 ms, so a
    reader that blocked on it (the fault) comes back after a moment, never hangs."""
    path = root / "pipe"
    os.mkfifo(path)
    done = threading.Event()

    def unblock() -> None:
        while not done.wait(0.05):
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                continue  # no reader yet

    writer = threading.Thread(target=unblock, daemon=True)
    writer.start()
    yield path
    done.set()
    writer.join(timeout=5)


def test_a_fifo_is_refused_without_blocking(root: Path, fifo: Path) -> None:
    with pytest.raises(Refused, match="FIFO"):
        read_confined(root, fifo)


def test_a_file_over_the_limit_is_refused_before_it_is_read(root: Path) -> None:
    (root / "big").write_bytes(b"x" * 101)
    with pytest.raises(Refused, match="101 bytes"):
        read_confined(root, root / "big", limit=100)
    assert read_confined(root, root / "big", limit=101) == b"x" * 101


def test_a_missing_file_is_file_not_found(root: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_confined(root, root / "absent")
    assert resolve_confined(root, root / "absent") == root.resolve() / "absent"
