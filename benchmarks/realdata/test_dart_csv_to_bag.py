"""The DART logger-CSV converter: what it writes is what the recording description reads."""

from pathlib import Path
import sys

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from csv_logs import CsvError
from dart_csv_to_bag import COLUMNS, convert, main
from evaluate_predictions import read_recording


def _csv(path: Path, rows: int = 40) -> np.ndarray:
    """A logger CSV: 10 ms ticks, the car turning; every 5th row repeats the Vicon sample."""
    k = np.arange(rows)
    vicon_t = 1.726e9 + 0.01 * (k - (k % 5 == 4))  # a repeated Vicon stamp is written once
    data = np.column_stack([
        0.01 * k, 0.5 + 0 * k, 7.4 + 0 * k, 0.1 * np.sin(k), 0.2 * np.cos(k), 0.3 + 0.01 * k,
        1.0 + 0.001 * k, (k > 3).astype(float), 0.3 + 0 * k, np.linspace(-1.0, 1.0, rows),
        vicon_t, 0.02 * k, -0.01 * k, np.linspace(-3.0, 3.0, rows)])
    header = ','.join(COLUMNS)
    np.savetxt(path, data, delimiter=',', header=header, comments='', fmt='%.10f')
    return data


def _description(path: Path) -> Path:
    path.write_text(
        'steering: {topic: /steering_1, kind: normalised}\n'
        'drive: {topic: /throttle_1, kind: throttle}\n'
        'pose: {topic: /vicon/jetracer1, offset: [0.115, -0.01, -0.00769]}\n'
        'enable: {topic: /safety_value}\n'
        'wheel_speed: {topic: /arduino_data_1, index: 3, kind: speed}\n')
    return path


def test_rows_become_the_topics_the_description_reads(tmp_path):
    data = _csv(tmp_path / 'rec.csv')
    bag = convert(tmp_path / 'rec.csv', tmp_path / 'bag')
    rec = read_recording(bag, _description(tmp_path / 'rec.yaml'),
                         ('steering', 'drive', 'enable', 'wheel_speed'))
    kept = np.concatenate(([True], np.diff(data[:, 10]) > 0))
    assert rec.t.size == kept.sum() < len(data)
    np.testing.assert_allclose(rec.t, data[kept, 10], atol=1e-9)
    np.testing.assert_allclose(rec.x, data[kept, 11], atol=1e-12)
    np.testing.assert_allclose(rec.y, data[kept, 12], atol=1e-12)
    wrapped = np.angle(np.exp(1j * data[kept, 13]))  # the quaternion keeps the heading
    np.testing.assert_allclose(np.angle(np.exp(1j * (rec.yaw - wrapped))), 0.0, atol=1e-9)
    for role, col in (('steering', 9), ('drive', 8), ('enable', 7), ('wheel_speed', 6)):
        np.testing.assert_allclose(rec.signals[role].value, data[kept, col], atol=1e-6)
        np.testing.assert_allclose(rec.signals[role].t, data[kept, 10], atol=1e-9)
    assert rec.offset == (0.115, -0.01, -0.00769)


@pytest.mark.parametrize('text, match', [
    ('a,b,c\n1,2,3\n', r'not a DART logger CSV \(missing columns'),
    (','.join(COLUMNS) + '\n' + '1,2\n' * 20, 'malformed row'),
    (','.join(COLUMNS) + '\n' + ','.join(['0'] * len(COLUMNS)) + '\n', 'fewer than 10'),
])
def test_a_foreign_csv_is_one_line_and_exit_2(tmp_path, capsys, text, match):
    bad = tmp_path / 'bad.csv'
    bad.write_text(text)
    with pytest.raises(CsvError, match=match):
        convert(bad, tmp_path / 'bag')
    assert main([str(bad), str(tmp_path / 'bag2')]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'bad.csv' in err
    assert not (tmp_path / 'bag').exists() and not (tmp_path / 'bag2').exists()
