"""Tables for the command line: reading CSV/TSV/Parquet, column kinds, the feature frame.

One rule for fit and predict alike, so a model sees its columns the same way every time:
CSV/TSV cells are read as text; a column is *numeric* when every non-missing cell parses as a
number, else *categorical* (its levels are the cells' text). Missing cells are the empty cell
and the markers of :data:`NA_VALUES` (not "None", a common level name, e.g. in the sunburn
table). Parquet columns keep their types: numbers are numeric, everything else categorical
(levels as text).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ._errors import UserError

#: Cells read as missing values (besides the empty cell). "?" is C4.5's marker.
NA_VALUES = ("", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "#N/A")
_SEPARATORS = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".txt": None}
_PARQUET = (".parquet", ".pq")


#: Rows of a CSV parsed per block (~0.2 s).
CSV_BLOCK_ROWS = 200_000


def read_table(path: str | Path, sep: str | None = None) -> pd.DataFrame:
    """The table at ``path`` with text cells (CSV/TSV) or typed columns (Parquet).

    Raises UserError for a missing file, an unknown format, an empty table, ragged rows or
    repeated column names.
    """
    path = Path(path)
    if not path.exists():
        raise UserError(f"file not found: {path}")
    if path.is_dir():
        raise UserError(f"{path} is a directory, not a table")
    suffix = path.suffix.lower()
    if suffix in _PARQUET:
        frame = _read_parquet(path)
    else:
        if sep is None:
            if suffix not in _SEPARATORS:
                raise UserError(f"cannot tell the format of {path.name}: use a .csv, .tsv or "
                                ".parquet file, or give --sep")
            sep = _SEPARATORS[suffix] or _sniff(path)
        # pandas would rename a repeated "a" to "a.1"; judge the names as written
        header = [h.strip() for h in _check_rectangular(path, sep)]
        _check_names(header, path.name)
        try:
            # in blocks of rows: a Ctrl-C is taken between them (pandas' parser does not
            # look at signals; 2M rows take 2 s), and it is no slower than one block
            frame = pd.concat(pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False,
                                          na_values=list(NA_VALUES), skipinitialspace=True,
                                          chunksize=CSV_BLOCK_ROWS), ignore_index=True)
        except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
            raise UserError(f"cannot read {path.name}: {_first_line(exc)}") from None
    if frame.shape[1] == 0:
        raise UserError(f"{path.name} has no columns")
    if frame.shape[0] == 0:
        raise UserError(f"{path.name} has no rows (only a header)")
    names = [str(c) for c in frame.columns]
    _check_names(names, path.name)
    frame.columns = names
    return frame


def _check_names(names: list[str], source: str) -> None:
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes or any(n == "" or n.startswith("Unnamed: ") for n in names):
        raise UserError(f"{source}: column names must be present and distinct "
                        f"(repeated: {', '.join(dupes) or 'none'})")


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise UserError("reading Parquet needs pyarrow: pip install 'treelearn[parquet]'") \
            from None
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises its own error types for damaged files
        raise UserError(f"cannot read {path.name} as Parquet: {_first_line(exc)}") from None


def _sniff(path: Path) -> str:
    with path.open(newline="", errors="replace") as f:
        sample = f.read(65536)
    try:
        return csv.Sniffer().sniff(sample, delimiters=",\t;|").delimiter
    except csv.Error:
        raise UserError(f"cannot tell the column separator of {path.name}; give --sep") \
            from None


def _check_rectangular(path: Path, sep: str) -> list[str]:
    """Every row has as many fields as the header (pandas pads short rows silently); returns
    the header."""
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.reader(f, delimiter=sep, skipinitialspace=True)
            header = next(reader, None)
            if header is None:
                raise UserError(f"{path.name} is empty")
            width = len(header)
            for row in reader:
                if row and len(row) != width:
                    raise UserError(f"{path.name}: line {reader.line_num} has {len(row)} "
                                    f"fields, the header has {width} (ragged rows)")
    except UnicodeDecodeError:
        raise UserError(f"{path.name} is not UTF-8 text") from None
    except csv.Error as exc:
        raise UserError(f"cannot read {path.name}: {exc}") from None
    return header


def split_names(text: str) -> list[str]:
    """Column names from a comma-separated option value (blanks dropped)."""
    return [c.strip() for c in text.split(",") if c.strip()]


def is_numeric(col: pd.Series) -> bool:
    """Whether every non-missing cell of ``col`` is a number (text cells parsed)."""
    if pd.api.types.is_bool_dtype(col.dtype):
        return False
    if pd.api.types.is_numeric_dtype(col.dtype):
        return True
    present = col.dropna()
    if present.empty:
        return True
    # Parsing the distinct cells is enough, and text columns have few (0.19 s -> 0.02 s on
    # a 54k-row table with three text columns).
    return bool(pd.to_numeric(pd.Series(present.unique()), errors="coerce").notna().all())


@dataclass
class Columns:
    """How the command line reads a table's feature columns."""

    features: list[str]
    categorical: list[str]
    ignored: dict[str, str]  # column -> why

    def frame(self, table: pd.DataFrame, source: str = "the table") -> pd.DataFrame:
        """The feature frame a model reads: numeric columns as float64 (missing: NaN),
        categorical ones as pandas categoricals of their text, levels sorted (missing: NaN)."""
        missing = [c for c in self.features if c not in table.columns]
        if missing:
            raise UserError(f"{source} lacks the model's column(s): {', '.join(missing)}")
        out = {}
        cats = set(self.categorical)
        for c in self.features:
            col = table[c]
            if c in cats:
                text = col.astype(object).where(col.notna(), None)
                text = text.map(lambda v: v if v is None or isinstance(v, str) else str(v))
                # A pandas categorical with the sorted levels (the order a model learns from
                # text anyway): every refit of CV pruning then maps codes instead of hashing
                # each cell's text again (a tenth of a CLI fit, measured).
                out[c] = pd.Categorical(text, categories=sorted(text.dropna().unique()))
            else:
                values = pd.to_numeric(col, errors="coerce")
                bad = values.isna() & col.notna()
                if bad.any():
                    raise UserError(f"column {c!r} of {source} must be numeric; row "
                                    f"{int(np.flatnonzero(bad.to_numpy())[0]) + 1} holds "
                                    f"{col[bad].iloc[0]!r}")
                out[c] = values.astype(np.float64)
        return pd.DataFrame(out, index=table.index)


def choose_columns(table: pd.DataFrame, target: str, categorical: str = "auto",
                   ignore: list[str] | None = None, features: list[str] | None = None
                   ) -> Columns:
    """The feature columns of ``table`` for predicting ``target``.

    ``categorical``: "auto" (text columns), "none", or comma-separated names. Text columns whose
    every value is distinct are identifiers (a name per row), ignored unless listed in
    ``features``.
    """
    names = list(table.columns)
    for c in [*(ignore or []), *(features or [])]:
        if c not in names:
            raise UserError(f"no column {c!r}; the columns are: {', '.join(names)}")
    ignored: dict[str, str] = {c: "--ignore" for c in ignore or []}
    if features:
        if target in features:
            raise UserError(f"the target {target!r} cannot also be a feature")
        cols = [c for c in features if c not in ignored]
    else:
        cols = [c for c in names if c != target and c not in ignored]
    named = set(split_names(categorical)) if categorical not in ("auto", "none") else set()
    if not features:
        for c in list(cols):
            present = table[c].dropna()
            if c not in named and len(table) > 2 and present.size == len(table) \
                    and present.nunique() == len(table) and not is_numeric(table[c]):
                ignored[c] = "every value is distinct (an identifier)"
                cols.remove(c)
    if categorical == "auto":
        cat = [c for c in cols if not is_numeric(table[c])]
    elif categorical == "none":
        cat = []
        text = [c for c in cols if not is_numeric(table[c])]
        if text:
            raise UserError(f"--categorical none, but column {text[0]!r} holds text")
    else:
        cat = split_names(categorical)
        unknown = [c for c in cat if c not in cols]
        if unknown:
            raise UserError(f"--categorical names {unknown[0]!r}, which is not a feature column")
        text = [c for c in cols if c not in cat and not is_numeric(table[c])]
        if text:
            raise UserError(f"column {text[0]!r} holds text; list it in --categorical too")
    if not cols:
        raise UserError("no feature columns left to learn from")
    return Columns(features=cols, categorical=[c for c in cols if c in cat], ignored=ignored)


def target_column(table: pd.DataFrame, target: str, source: str) -> pd.Series:
    """The target column, or a UserError naming the columns there are."""
    if target not in table.columns:
        raise UserError(f"no column {target!r} in {source}; the columns are: "
                        f"{', '.join(map(str, table.columns))}")
    return table[target]


def task_of(y: pd.Series, task: str) -> str:
    """"classification" or "regression" for target ``y`` (``task`` "auto": text, booleans and
    integers with at most 20 distinct values are classes; other numbers are regressed)."""
    numeric = is_numeric(y)
    if task == "regression":
        if not numeric:
            bad = y.dropna()[pd.to_numeric(y.dropna(), errors="coerce").isna()]
            raise UserError(f"a regression target must be numeric; column {y.name!r} holds "
                            f"{bad.iloc[0]!r}")
        return task
    if task == "classification" or not numeric:
        return "classification"
    values = pd.to_numeric(y.dropna())
    integral = bool(np.all(np.mod(values.to_numpy(dtype=float), 1.0) == 0.0))
    return "classification" if integral and values.nunique() <= 20 else "regression"


def target_values(y: pd.Series, task: str) -> np.ndarray:
    """Labels (text, or integers when every label is one) or float regression targets."""
    if task == "regression":
        return pd.to_numeric(y).to_numpy(dtype=np.float64)
    if is_numeric(y):
        values = pd.to_numeric(y)
        if np.all(np.mod(values.to_numpy(dtype=float), 1.0) == 0.0):
            return values.to_numpy(dtype=np.float64).astype(np.int64)
        return values.to_numpy(dtype=np.float64)
    return y.astype(str).to_numpy(dtype=object)
