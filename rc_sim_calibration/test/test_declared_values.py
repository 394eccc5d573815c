"""A value the user declares is a value, zero included (issue 27 item 6): a recording
description's ``pose: {offset: [0, 0, 0]}`` says the pose is base_link's, whether the description
comes as a file or as the parsed Recording the CLI hands over, and it survives being written
back (``rcsim inspect --write-recording``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rc_sim_calibration.dataset import load_dataset
from rc_sim_calibration.settings import load_fit_settings
from rc_sim_description.params import load_vehicle_params
from rc_sim_description.recording import load_recording, recording_from_mapping, recording_yaml

BAG = Path('/work/shared/realdata/dart/4_sept_random_driving_fast.bag')
DESCRIPTION = ('steering: {topic: /steering_1, kind: normalised}\n'
               'drive: {topic: /throttle_1, kind: throttle}\n'
               'enable: {topic: /safety_value}\n'
               'pose: {topic: /vicon/jetracer1%s}\n')


def test_a_declared_zero_offset_is_declared() -> None:
    zero = recording_from_mapping({'pose': {'topic': '/p', 'offset': [0, 0, 0]}})
    none = recording_from_mapping({'pose': {'topic': '/p'}})
    assert zero.roles['pose'].offset_declared and not none.roles['pose'].offset_declared
    assert 'offset: [0.0, 0.0, 0.0]' in recording_yaml(zero)
    assert 'offset' not in recording_yaml(none)


@pytest.mark.skipif(not BAG.exists(), reason='needs the shared real recordings')
@pytest.mark.parametrize('as_object', [False, True], ids=['file', 'Recording'])
def test_a_declared_zero_offset_is_not_fitted(tmp_path: Path, as_object: bool) -> None:
    """Before: the parsed description (what rcsim fit passes) lost the declaration, and the fit
    estimated an offset of its own that rcsim replay did not apply."""
    base = load_vehicle_params()
    settings = load_fit_settings()
    declared = tmp_path / 'declared.yaml'
    declared.write_text(DESCRIPTION % ', offset: [0.0, 0.0, 0.0]')
    unknown = tmp_path / 'unknown.yaml'
    unknown.write_text(DESCRIPTION % '')
    for path, known in ((declared, True), (unknown, False)):
        rec = load_recording(path) if as_object else path
        ds = load_dataset(BAG, base, settings.data, recording=rec)
        assert ds.offset_known is known, path.name
        assert ds.pose_offset == (0.0, 0.0, 0.0)
