"""The legibility check (paper_lib.pipeline.figcheck) on small synthetic figures, one per defect
it names, and the save path that runs it (strict at smoke, a warning otherwise)."""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from paper_lib.pipeline.figcheck import check_figure, drawn_tick_labels  # noqa: E402
from paper_lib.pipeline.plots import stamp  # noqa: E402
from paper_lib.pipeline.provenance import Outputs  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _clean():
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([1, 2, 3], [0.2, 0.5, 0.9], label="ours")
    ax.set(xlabel="step", ylabel="accuracy", title="A clean figure")
    ax.legend(fontsize=8)
    stamp(fig, "cpu", 3, "95% CI over seeds")
    fig.tight_layout()
    return fig


def test_a_clean_figure_passes_and_keeps_its_dpi():
    fig = _clean()
    dpi = fig.get_dpi()
    assert check_figure(fig, dpi=150) == []
    assert fig.get_dpi() == dpi


def test_colliding_tick_labels_are_found():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.bar([f"category number {i}" for i in range(6)], np.arange(6))  # long labels, 3 inches
    ax.set_title("crowded")
    problems = check_figure(fig)
    assert len(problems) == 1 and problems[0].startswith("tick labels overlap on the x axis of 'crowded': ")
    ax.tick_params(axis="x", rotation=90)  # rotated, they fit
    assert check_figure(fig) == []


def test_rotated_labels_are_measured_as_drawn_not_by_their_bounding_boxes():
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.bar([f"ROLE_{i}" for i in range(20)], np.ones(20))
    ax.set_title("roles")
    ax.tick_params(axis="x", rotation=60)  # boxes of the slanted labels overlap, the labels do not
    fig.tight_layout()
    assert check_figure(fig) == []
    ax.tick_params(axis="x", rotation=15)  # nearly flat, they do
    assert check_figure(fig)[0].startswith("tick labels overlap on the x axis of 'roles': 'ROLE_0' and 'ROLE_1'")


def test_minor_labels_of_a_log_axis_colliding_with_major_ones_are_found():
    # 03's throughput: seq_len 256..8192 on a log axis labels 3x10^2, 4x10^2 ... beside 256, 1024
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([256, 1024, 4096, 8192], [2.0, 1.5, 0.9, 0.6])
    ax.set_xscale("log")
    ax.set_xticks([256, 1024, 4096, 8192], ["256", "1024", "4096", "8192"])
    assert any("tick labels overlap on the x axis" in p for p in check_figure(fig))
    ax.set_xscale("log", base=2)
    ax.set_xticks([256, 1024, 4096, 8192], ["256", "1024", "4096", "8192"])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    assert check_figure(fig) == []


def test_ticks_outside_the_view_do_not_count():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1])
    ax.set_xticks([-5, -4.99, 0, 1])  # two colliding labels, both outside the view limits
    ax.set_xlim(0, 1)
    fig.canvas.draw()  # tick labels get their text when drawn
    assert [t.get_text() for t in drawn_tick_labels(ax.xaxis)] == ["0.00", "1.00"]
    assert check_figure(fig) == []


def test_small_text_is_found():
    fig = _clean()
    fig.axes[0].annotate("tiny note", (2, 0.5), fontsize=5)
    problems = check_figure(fig)
    assert problems == ["text of 5 pt, smaller than 7 pt: 'tiny note'"]


def test_a_footer_over_the_tick_labels_is_found():
    # 04's loss_by_repeat: rotated tick labels hang below the axes, into the footer under it
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.bar(["SPEN, linear attention", "SPEN, softmax attention", "SPEN, history attention"], [0.1, 0.2, 0.1])
    ax.tick_params(axis="x", rotation=25)
    fig.text(0.01, 0.02, "profile: cpu · 2 seeds · error bars: 95% CI over seeds", fontsize=8)
    problems = check_figure(fig)
    assert problems == ["text 'profile: cpu · 2 seeds · error bars: ...' overlaps the x tick label "
                        "'SPEN, linear attention' of axes 1"]


def test_a_code_name_where_words_belong_is_found():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label="spen_linear")
    ax.set(xlabel="gap $h_{t-1}$", title="learned depth weights")
    ax.legend()
    assert check_figure(fig) == ["code name(s) spen_linear in a title, label, tick or legend: say it in words"]


def test_a_wide_figure_is_found_and_the_width_is_what_savefig_writes(tmp_path):
    fig, axes = plt.subplots(1, 4, figsize=(16, 3))
    for ax in axes:
        ax.plot([0, 1], [0, 1])
    fig.suptitle("four panels in a row")
    problems = check_figure(fig, dpi=150)
    assert len(problems) == 1 and problems[0].endswith("more than 1600 px (split the panels into rows or make it narrower)")
    width = float(problems[0].split(" px")[0])
    fig.savefig(tmp_path / "f.png", dpi=150, bbox_inches="tight")
    from PIL import Image

    assert abs(Image.open(tmp_path / "f.png").size[0] - width) <= 2
    assert check_figure(fig, dpi=72) == []  # at 72 dpi the same figure is 1,100 px wide


def test_several_panels_need_a_suptitle_a_colorbar_is_no_panel():
    fig, axes = plt.subplots(1, 2, figsize=(7, 3))
    for ax in axes:
        ax.plot([0, 1], [0, 1])
    fig.tight_layout()
    assert check_figure(fig) == ["2 panels and no suptitle (fig.suptitle says what the figure shows)"]
    fig.suptitle("two panels")  # added after tight_layout: it sits on the top tick label
    assert check_figure(fig) == ["text 'two panels' overlaps the y tick label '1.0' of axes 2"]
    fig.tight_layout()
    assert check_figure(fig) == []
    fig2, ax = plt.subplots(figsize=(5, 4))
    fig2.colorbar(ax.imshow(np.eye(3)), ax=ax)
    assert check_figure(fig2) == []


def _outputs(tmp_path, profile):
    return Outputs("99_demo", profile, {}, seeds=[0], root=tmp_path, publish=False)


def test_save_figure_raises_at_smoke_and_warns_otherwise(tmp_path):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.bar([f"category number {i}" for i in range(6)], np.arange(6))
    with pytest.raises(ValueError, match=r"^figure 'crowded' of 99_demo: tick labels overlap on the x axis of axes 1"):
        _outputs(tmp_path, "smoke").save_figure(fig, "crowded", alt="Bars of six categories, all overlapping.",
                                                title="Crowded bars")
    out = _outputs(tmp_path, "cpu")
    with pytest.warns(UserWarning, match=r"^figure 'crowded' of 99_demo: tick labels overlap"):
        out.save_figure(fig, "crowded", alt="Bars of six categories, all overlapping.", title="Crowded bars")
    index = json.loads((out._stage / "figures.json").read_text())
    assert index["crowded"]["alt"] == "Bars of six categories, all overlapping."
    assert index["crowded"]["problems"][0].startswith("tick labels overlap on the x axis")


def test_save_figure_writes_alt_and_title_beside_the_figures(tmp_path):
    out = _outputs(tmp_path, "smoke")
    out.save_figure(_clean(), "clean", alt="A line rising from 0.2 to 0.9 over three steps.", title="Accuracy by step")
    out.save_figure(_clean(), "again", alt="The same line, saved a second time.", title="Again")
    out.finish()
    index = json.loads((out.dir / "figures.json").read_text())
    assert index == {"again": {"alt": "The same line, saved a second time.", "title": "Again"},
                     "clean": {"alt": "A line rising from 0.2 to 0.9 over three steps.", "title": "Accuracy by step"}}
    assert b"Accuracy by step" in (out.dir / "clean.png").read_bytes()
    with pytest.raises(ValueError, match="alt must be one sentence describing what figure 'x' shows"):
        out.save_figure(_clean(), "x", alt="x", title="X")
    with pytest.raises(ValueError, match="title of figure 'x' must be a non-empty line"):
        out.save_figure(_clean(), "x", alt="A line rising over three steps.", title=" ")
