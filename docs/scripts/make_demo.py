"""Draw the README's demo, docs/demo.gif, from a real run: terminal frames of a real
``skillpilot route`` on the example skills, beside the skill listing the host alone would paste
into every model request.

    python docs/scripts/make_demo.py [--output docs/demo.gif] [--message "..."]

It indexes ``examples/skills`` into a temporary home, runs ``skillpilot route MESSAGE`` there as
a user would (a fresh process, so its output also says what loading the models cost), and draws
what it printed, typed and then printed line by line, with Pillow (the ``docs`` extra) in DejaVu
Sans Mono (Debian's ``fonts-dejavu-core``). Nothing is downloaded; the numbers are this
machine's. The GIF must stay under 2 MB (tests/test_readme.py checks it).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from skillpilot import SkillPilot

REPO = Path(__file__).resolve().parents[2]
MESSAGE = "Cut the boring first minute out of my screen recording"
FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", "/usr/share/fonts/dejavu/DejaVuSansMono.ttf")
SIZE = 15
WIDTH, HEIGHT = 1280, 600
SPLIT = 470  # the left pane's width
MARGIN, LINE = 16, 20
COLOURS = {
    "background": (250, 250, 250),
    "terminal": (30, 32, 38),
    "text": (222, 222, 222),
    "dim": (140, 146, 156),
    "host": (60, 60, 60),
    "title": (20, 20, 20),
    "hard": (120, 210, 120),
    "soft": (230, 200, 90),
    "prompt": (120, 170, 240),
    "rule": (200, 200, 200),
}
MAX_BYTES = 2 * 1024 * 1024


def real_run(message: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The example skills as the host would list them (name, description), and what
    ``skillpilot route MESSAGE`` printed, each from a real run in a fresh home."""
    with tempfile.TemporaryDirectory(prefix="skillpilot-demo-") as scratch:
        home = Path(scratch)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLPILOT_")}
        env["SKILLPILOT_HOME"] = str(home)
        # Wide enough that Rich never wraps a line itself; the frames wrap to the pane.
        env["COLUMNS"] = "400"
        cli = [sys.executable, "-m", "skillpilot"]
        subprocess.run([*cli, "index", str(REPO / "examples" / "skills")], env=env, check=True, capture_output=True)
        routed = subprocess.run([*cli, "route", message], env=env, check=True, capture_output=True, text=True)
        listing = [(s.name, s.skill.description) for s in SkillPilot(home=home).skills()]
    return sorted(listing), routed.stdout.rstrip("\n").splitlines()


def _font() -> ImageFont.FreeTypeFont:
    for path in FONTS:
        if Path(path).is_file():
            return ImageFont.truetype(path, SIZE)
    raise SystemExit("DejaVu Sans Mono is missing: apt-get install fonts-dejavu-core")


def _columns(font: ImageFont.FreeTypeFont, width: int) -> int:
    return int(width // font.getlength("M"))


def _terminal_lines(command: str, output: list[str], columns: int) -> list[tuple[str, str]]:
    """The terminal's lines after the command ran, each with its colour, wrapped to the pane."""
    lines: list[tuple[str, str]] = []
    for text in output:
        colour = "text"
        if text.startswith("hard "):
            colour = "hard"
        elif text.startswith(("soft ", "pass-through")):
            colour = "soft"
        elif text.startswith(("  -", "  path:", "  unmet:", "  runners-up:")):
            colour = "dim"
        indent = len(text) - len(text.lstrip())
        wrapped = textwrap.wrap(text, columns, subsequent_indent=" " * (indent + 2)) or [""]
        lines.extend((line, colour) for line in wrapped)
    return lines


def _host_pane(draw: ImageDraw.ImageDraw, font: ImageFont.FreeTypeFont, listing: list[tuple[str, str]]) -> None:
    draw.text((MARGIN, MARGIN), "The host alone: every skill, every request", font=font, fill=COLOURS["title"])
    columns = _columns(font, SPLIT - 2 * MARGIN)
    y = MARGIN + LINE + 8
    for name, description in listing:
        entry = f"- {name}: {description}"
        shown = entry if len(entry) <= columns else entry[: columns - 1] + "…"
        draw.text((MARGIN, y), shown, font=font, fill=COLOURS["host"])
        y += LINE
    characters = sum(len(f"- {n}: {d}\n") for n, d in listing)
    notes = [
        f"{len(listing)} skills, {characters:,} characters pasted",
        "into the model's context on every turn;",
        "the model picks one itself.",
        "",
        "At 294 skills Claude Code's listing is",
        "30,048 characters and keeps only 65",
        "descriptions (measured: docs/benchmarks).",
    ]
    y += LINE // 2
    for note in notes:
        draw.text((MARGIN, y), note, font=font, fill=COLOURS["dim"])
        y += LINE


def _frame(
    font: ImageFont.FreeTypeFont,
    listing: list[tuple[str, str]],
    typed: str,
    lines: list[tuple[str, str]],
    cursor: bool,
) -> Image.Image:
    image = Image.new("RGB", (WIDTH, HEIGHT), COLOURS["background"])
    draw = ImageDraw.Draw(image)
    _host_pane(draw, font, listing)
    left = SPLIT
    draw.rectangle((left, 0, WIDTH, HEIGHT), fill=COLOURS["terminal"])
    draw.text((left + MARGIN, MARGIN), "With SkillPilot: routed before the model runs", font=font, fill=COLOURS["text"])
    draw.line((left + MARGIN, MARGIN + LINE + 2, WIDTH - MARGIN, MARGIN + LINE + 2), fill=COLOURS["dim"])
    y = MARGIN + LINE + 10
    columns = _columns(font, WIDTH - left - 2 * MARGIN)
    prompt = "$ "
    command_lines = textwrap.wrap(prompt + typed, columns) or [prompt]
    for i, line in enumerate(command_lines):
        draw.text((left + MARGIN, y), line, font=font, fill=COLOURS["prompt"] if i == 0 else COLOURS["text"])
        y += LINE
    if cursor:
        x = left + MARGIN + font.getlength(command_lines[-1])
        draw.rectangle((x + 1, y - LINE + 3, x + 9, y - 3), fill=COLOURS["text"])
    for text, colour in lines:
        draw.text((left + MARGIN, y), text, font=font, fill=COLOURS[colour])
        y += LINE
    footnote = (
        "ms: routing time. A fresh process also loads the index and both models",
        'once ("+ ... loading"); the service and the host hooks keep them loaded.',
    )
    for i, note in enumerate(footnote):
        draw.text((left + MARGIN, HEIGHT - MARGIN - (2 - i) * LINE), note, font=font, fill=COLOURS["dim"])
    return image


def frames(message: str) -> tuple[list[Image.Image], list[int]]:
    """Every frame of the demo and how long each is shown (ms)."""
    listing, output = real_run(message)
    font = _font()
    command = f'skillpilot route "{message}"'
    columns = _columns(font, WIDTH - SPLIT - 2 * MARGIN)
    lines = _terminal_lines(command, output, columns)
    images = [_frame(font, listing, "", [], cursor=True)]
    durations = [1200]
    for end in range(4, len(command) + 4, 4):
        images.append(_frame(font, listing, command[:end], [], cursor=True))
        durations.append(70)
    for shown in range(1, len(lines) + 1):
        images.append(_frame(font, listing, command, lines[:shown], cursor=False))
        durations.append(140)
    durations[-1] = 7000
    return images, durations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--output", type=Path, default=REPO / "docs" / "demo.gif")
    parser.add_argument("--message", default=MESSAGE)
    args = parser.parse_args()
    images, durations = frames(args.message)
    palette = images[-1].quantize(colors=32, method=Image.Quantize.MEDIANCUT)
    quantized = [image.quantize(palette=palette, dither=Image.Dither.NONE) for image in images]
    quantized[0].save(
        args.output, save_all=True, append_images=quantized[1:], duration=durations, loop=0, optimize=True
    )
    size = args.output.stat().st_size
    print(f"{args.output}: {len(images)} frames, {size / 1024:.0f} KiB")
    if size > MAX_BYTES:
        raise SystemExit(f"{args.output} is {size:,} bytes, over the README's 2 MB")


if __name__ == "__main__":
    main()
