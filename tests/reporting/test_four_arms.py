"""The four-arm table (nothing pretrained / static vectors / ELMo alone / both), made by the report from
records: each arm's cell, the paper's gain (vectors + ELMo − vectors) beside the paper's, and the gain of
ELMo over nothing pretrained."""

from report_records import write_record

from reporting import report


def test_the_four_arm_table_has_each_arm_and_both_gains(tmp_path):
    runs = tmp_path / "runs"
    values = {
        "no_pretraining": (60.0, 62.0),
        "baseline": (80.0, 81.0),
        "elmo_alone": (84.0, 85.0),
        "elmo": (88.0, 88.5),
    }
    for setting, seeds in values.items():
        for seed, value in enumerate(seeds):
            position = "none" if setting in ("baseline", "no_pretraining") else "input"
            write_record(runs, "ner", setting, seed, value, position=position)
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    text = (tmp_path / "out" / "four_arms.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| ner"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1].startswith("61.00 ") and cells[2].startswith("80.50 ")
    assert cells[3].startswith("84.50 ") and cells[4].startswith("88.25 ")
    assert "+7.75 / 39.7%" in row  # vectors + ELMo − vectors: 88.25 − 80.50, of 19.50 points of error
    assert "+23.50 / 60.3%" in row  # ELMo − nothing pretrained: 84.50 − 61.00, of 39.00
    assert "+2.07 / 21.0%" in row  # the paper's NER gain and error reduction (90.15 -> 92.22)
    assert "what context adds over static vectors" in text


def test_no_four_arm_table_from_table_1s_arms_alone(tmp_path):
    runs = tmp_path / "runs"
    write_record(runs, "ner", "baseline", 0, 80.0, position="none")
    write_record(runs, "ner", "elmo", 0, 85.0)
    report.main(["--runs", str(runs), "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out" / "four_arms.md").exists()
