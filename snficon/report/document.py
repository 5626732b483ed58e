"""The report as text: Markdown and HTML written side by side from the same sections."""

from __future__ import annotations

import base64
import html
import io
import math

import pandas as pd


def render(fig, fmt: str) -> bytes:
    """The figure as ``fmt`` (png, svg) bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def csv_bytes(table: pd.DataFrame) -> bytes:
    """The table as CSV (full float precision, empty cells for missing values)."""
    return table.to_csv(index=False).encode("utf-8")


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == 0 or 0.01 <= abs(value) < 1e6:
            return f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 100 else f"{value:.1f}"
        return f"{value:.3g}"
    return str(value).replace("|", "\\|")


def markdown_table(table: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table."""
    head = "| " + " | ".join(str(c).replace("|", "\\|") for c in table.columns) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    body = ["| " + " | ".join(_cell(v) for v in row) + " |"
            for row in table.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def html_table(table: pd.DataFrame) -> str:
    """An HTML table (numbers formatted as in :func:`markdown_table`)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
                   for row in table.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class Document:
    """Markdown and HTML of the report, section by section."""

    def __init__(self, title: str, intro: str) -> None:
        self.title = title
        self.markdown = [f"# {title}", "", intro, ""]
        self.html = [f"<h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p>"]

    def heading(self, text: str) -> None:
        self.markdown += [f"## {text}", ""]
        self.html.append(f"<h2>{html.escape(text)}</h2>")

    def paragraph(self, text: str, *, emphasis: bool = False) -> None:
        self.markdown += [f"*{text}*" if emphasis else text, ""]
        escaped = html.escape(text)
        self.html.append(f"<p><em>{escaped}</em></p>" if emphasis else f"<p>{escaped}</p>")

    def table(self, table: pd.DataFrame, csv_link: str | None = None) -> None:
        if csv_link:
            self.markdown += [f"Table: [{csv_link}]({csv_link})", ""]
        self.markdown += [markdown_table(table), ""]
        self.html.append(html_table(table))

    def figure(self, title: str, png: bytes, png_link: str, svg_link: str, csv_link: str) -> None:
        self.markdown += [f"![{title}]({png_link}) ([SVG]({svg_link}), "
                          f"[table CSV]({csv_link}))", ""]
        encoded = base64.b64encode(png).decode("ascii")
        self.html.append(f"<img alt=\"{html.escape(title)}\" "
                         f"src=\"data:image/png;base64,{encoded}\">")

    def markdown_text(self) -> str:
        return "\n".join(self.markdown)

    def html_text(self) -> str:
        style = ("body{font-family:sans-serif;max-width:1300px;margin:auto;padding:1em}"
                 "table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.85em}"
                 "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
                 "img{max-width:100%}em{color:#333}")
        return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                f"<title>{html.escape(self.title)}</title><style>{style}</style></head><body>"
                + "\n".join(self.html) + "</body></html>\n")
