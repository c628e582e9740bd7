"""Tables laid out for the width there is, with no figure cut.

A table is printed as rich lays it out when it fits the console. When it does not, but its
columns fit at the width of their longest words, the columns are given widths that wrap text at
spaces and never cut a word. When even that does not fit (a narrow terminal, many columns), each
row is printed as a record: its first cell, then the others, as `header: value` items packed
into lines, each item whole (a table without headers: `first: rest`, a line each). Piped output is laid out for 80 columns (or $COLUMNS), as rich's console is.
"""
from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

SEPARATOR = "  ·  "
INDENT = "  "


def show(console: Console, table: Table) -> None:
    """Print `table` in the console's width with every cell whole."""
    console.print(fit(console, table))


def fit(console: Console, table: Table) -> RenderableType:
    """`table` itself, with word-keeping column widths if it needs them, or its rows as records."""
    width = console.width
    if not table.columns:
        return table
    natural = Measurement.get(console, console.options.update_width(10**6), table)
    if natural.maximum <= width:
        return _titled(console, table, natural.maximum)
    _, right, _, left = Padding.unpack(table.padding)
    padding = left + right
    lows, highs = zip(*(_column_range(console, table, n) for n in range(len(table.columns))))
    borders = natural.maximum - sum(highs) - padding * len(table.columns)
    room = width - borders - padding * len(table.columns)
    if sum(lows) > room:
        return records(console, table)
    for column, chosen in zip(table.columns, _share(room, list(lows), list(highs))):
        column.width = chosen
    return _titled(console, table, width)


def _titled(console: Console, table: Table, width: int) -> RenderableType:
    """The table, its title above it as a line of its own when the title is wider than the table
    (rich would cut a long path in the title to the table's width)."""
    if not table.title:
        return table
    title = _plain(console, table.title)
    if len(title) <= width:
        return table
    table.title = None
    return Group(Text(title, style="italic"), table)


def _column_range(console: Console, table: Table, index: int) -> tuple[int, int]:
    """(longest word, longest line) of a column's header and cells, padding not included."""
    column = table.columns[index]
    cells = [column.header, *column.cells] if table.show_header else list(column.cells)
    low = high = 1
    for cell in cells:
        measured = Measurement.get(console, console.options.update_width(10**6), _text(console, cell))
        low, high = max(low, measured.minimum), max(high, measured.maximum)
    return (high, high) if column.no_wrap else (low, high)


def _share(room: int, lows: list[int], highs: list[int]) -> list[int]:
    """Column widths from at least `lows` towards `highs`, adding up to at most `room`: the space
    over the lows goes to the columns in proportion to what they lack."""
    widths = list(lows)
    spare = room - sum(widths)
    wants = [high - low for low, high in zip(lows, highs)]
    total = sum(wants)
    if total:
        for n, want in enumerate(wants):
            widths[n] += min(want, spare * want // total)
    for n in range(len(widths)):  # what rounding down left over, first come first served
        extra = min(highs[n] - widths[n], room - sum(widths))
        widths[n] += max(extra, 0)
    return widths


def records(console: Console, table: Table) -> Group:
    """The rows of `table` as records: `header: value` of the first cell on a line of its own,
    then those of the other cells packed into lines of the console's width, no item broken."""
    headers = [_plain(console, column.header) for column in table.columns]
    columns = [[_plain(console, cell) for cell in column.cells] for column in table.columns]
    lines: list[RenderableType] = []
    if table.title:
        lines.append(Text(_plain(console, table.title), style="bold"))
    for first, *rest in zip(*columns):
        if not table.show_header:  # a list of names and values: one line each
            lines.append(Text(f"{first}: {' '.join(rest)}"))
            continue
        lines.append(Text(f"{headers[0]}: {first}" if headers[0] else first, style="bold"))
        items = [f"{header}: {value}" for header, value in zip(headers[1:], rest) if value]
        lines += [Text(INDENT + line) for line in _pack(items, console.width - len(INDENT))]
    if table.caption:
        lines.append(Text(_plain(console, table.caption), style="dim"))
    return Group(*lines)


def _pack(items: list[str], width: int) -> list[str]:
    """Items joined by SEPARATOR into lines of at most `width` (an item longer than that alone)."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + len(SEPARATOR) + len(item) <= width:
            lines[-1] += SEPARATOR + item
        else:
            lines.append(item)
    return lines


def _text(console: Console, cell: RenderableType) -> RenderableType:
    return console.render_str(cell) if isinstance(cell, str) else cell


def _plain(console: Console, cell: RenderableType) -> str:
    """A cell's text as shown (markup applied), its lines joined by commas."""
    text = _text(console, cell)
    plain = text.plain if isinstance(text, Text) else str(text)
    return ", ".join(line.strip() for line in plain.splitlines() if line.strip())
