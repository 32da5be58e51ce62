"""gate.jsonio.no_gc: collection paused inside, what was built frozen on the way out."""

from __future__ import annotations

import gc

import pytest

from gate.jsonio import no_gc


@pytest.fixture(autouse=True)
def _collector() -> object:
    was = gc.isenabled()
    gc.enable()
    yield
    gc.unfreeze()
    if not was:
        gc.disable()


def test_paused_inside_and_restored_after() -> None:
    with no_gc():
        assert not gc.isenabled()
        with no_gc():  # nested: the inner block leaves it paused
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_what_the_block_built_is_not_rescanned() -> None:
    gc.unfreeze()
    with no_gc():
        built = [{"i": i} for i in range(10_000)]
    # Frozen: a full collection no longer walks these (the cost this avoids).
    assert gc.get_freeze_count() >= len(built)
    assert all(not any(o is d for o in gc.get_objects(generation=2)) for d in built[:3])


def test_left_disabled_when_it_was_disabled() -> None:
    gc.disable()
    gc.unfreeze()
    with no_gc():
        pass
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0  # nothing frozen by a block that did not own gc


def test_restored_on_error() -> None:
    with pytest.raises(ValueError), no_gc():
        raise ValueError("boom")
    assert gc.isenabled()
