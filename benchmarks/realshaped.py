"""Real-shaped tables for the benchmarks: few distinct values per feature, categories, holes.

Synthetic ``make_classification`` data (every value distinct) flatters presorted and histogram
engines; real tables have features with a handful to a few hundred distinct values, text
categories, missing values and continuous targets, and fully grown trees of tiny nodes, where
the constant cost per node decides. No such table ships with a package of the test extras
(scikit-learn's bundled ones have at most 1,797 rows), so these generators draw tables *shaped
like* well-known public ones: the same number of rows and columns, the same kinds of columns
with about the same numbers of distinct values and levels, missing values where the originals
have them, and a target that depends on several columns with noise. They are stand-ins for the
shape, not copies of the data.

``TABLES`` maps a name to a generator ``f(n=None, seed=0) -> (DataFrame, y, task)``; the
DataFrame has pandas ``category`` columns for the categorical features and NaN for holes.
:func:`ordinal` gives the same table with categories as integer codes (what scikit-learn's tree
needs). Used by ``bench_realshaped.py`` and ``bench_cli.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _cat(rng, n, levels, p=None, prefix="L"):
    """A categorical column of ``levels`` named levels drawn with probabilities ``p``
    (Zipf-like by default: real level counts are skewed)."""
    if p is None:
        p = 1.0 / np.arange(1, levels + 1) ** 0.8
    p = np.asarray(p, dtype=float)
    p /= p.sum()
    codes = rng.choice(levels, size=n, p=p)
    names = [f"{prefix}{k}" for k in range(levels)]
    return codes, pd.Categorical.from_codes(codes, categories=names)


def _holes(rng, col: pd.Series | pd.Categorical, frac: float):
    col = pd.Series(col).copy()
    col[rng.random(col.shape[0]) < frac] = np.nan
    return col


def diamonds(n: int | None = None, seed: int = 0):
    """Shaped like ggplot2's diamonds (53,940 rows): carat (~270 values), cut (5 levels),
    color (7), clarity (8), depth (~180), table (~130), x, y, z (~550 each); target price
    (continuous, regression)."""
    n = 53_940 if n is None else n
    rng = np.random.default_rng(seed)
    carat = np.round(np.clip(rng.lognormal(-0.45, 0.55, n), 0.2, 5.0), 2)
    cut_c, cut = _cat(rng, n, 5, [0.03, 0.09, 0.22, 0.26, 0.40], "cut")
    col_c, color = _cat(rng, n, 7, [0.13, 0.18, 0.18, 0.21, 0.15, 0.10, 0.05], "col")
    cla_c, clarity = _cat(rng, n, 8, [0.01, 0.17, 0.24, 0.15, 0.23, 0.09, 0.07, 0.04], "cla")
    depth = np.round(rng.normal(61.7, 1.4, n), 1)
    table = np.round(rng.normal(57.5, 2.2, n) * 2) / 2
    size = np.cbrt(carat) * 6.5
    x = np.round(size * rng.normal(1.0, 0.01, n), 2)
    y = np.round(x * rng.normal(1.0, 0.006, n), 2)
    z = np.round(x * depth / 100 * rng.normal(1.0, 0.01, n), 2)
    log_price = (7.8 + 1.7 * np.log(carat) + 0.06 * cut_c - 0.09 * col_c + 0.08 * cla_c
                 - 0.01 * (depth - 61.7) ** 2 + rng.normal(0, 0.15, n))
    price = np.round(np.exp(log_price))
    df = pd.DataFrame({"carat": carat, "cut": cut, "color": color, "clarity": clarity,
                       "depth": depth, "table": table, "x": x, "y": y, "z": z})
    return df, price.astype(np.float64), "regression"


def adult(n: int | None = None, seed: int = 0):
    """Shaped like the UCI adult census table (48,842 rows, 14 features): ages, hours,
    capital gains with few distinct values, eight text columns (2 to 42 levels), holes in
    workclass, occupation and native country; binary target (income over 50k)."""
    n = 48_842 if n is None else n
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(rng.gamma(6.0, 6.5, n) + 17), 17, 90)
    wc_c, workclass = _cat(rng, n, 8, None, "wc")
    fnlwgt = np.round(rng.lognormal(12.0, 0.5, n), -2)  # ~ a few thousand distinct values
    edu_num = np.clip(np.round(rng.normal(10, 2.6, n)), 1, 16)
    education = pd.Categorical.from_codes((edu_num - 1).astype(int),
                                          categories=[f"edu{k}" for k in range(16)])
    mar_c, marital = _cat(rng, n, 7, None, "mar")
    occ_c, occupation = _cat(rng, n, 14, None, "occ")
    rel_c, relationship = _cat(rng, n, 6, None, "rel")
    _, race = _cat(rng, n, 5, [0.85, 0.1, 0.03, 0.01, 0.01], "race")
    sex_c, sex = _cat(rng, n, 2, [0.67, 0.33], "sex")
    gain_vals = np.round(rng.lognormal(8.0, 1.0, 120), -1)
    gain = np.where(rng.random(n) < 0.08, rng.choice(gain_vals, n), 0.0)
    loss_vals = np.round(rng.lognormal(7.4, 0.3, 90))
    loss = np.where(rng.random(n) < 0.05, rng.choice(loss_vals, n), 0.0)
    hours = np.clip(np.round(rng.normal(40, 12, n)), 1, 99)
    nc_c, country = _cat(rng, n, 41, None, "nc")
    logit = (-9.3 + 0.05 * age + 0.35 * edu_num + 0.9 * (mar_c == 0) + 0.6 * (sex_c == 0)
             + 0.03 * hours + 0.0004 * gain - 0.2 * (occ_c % 3) + 0.1 * (rel_c == 1)
             - 0.0001 * (fnlwgt - 160_000) / 100)
    label = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    df = pd.DataFrame({"age": age, "workclass": _holes(rng, workclass, 0.056),
                       "fnlwgt": fnlwgt, "education": education, "education_num": edu_num,
                       "marital_status": marital, "occupation": _holes(rng, occupation, 0.057),
                       "relationship": relationship, "race": race, "sex": sex,
                       "capital_gain": gain, "capital_loss": loss, "hours_per_week": hours,
                       "native_country": _holes(rng, country, 0.018)})
    _ = wc_c, nc_c
    return df, label, "classification"


def flights(n: int | None = None, seed: int = 0):
    """Shaped like a year of US flight delays (here 327,000 rows, 9 features): month, day,
    weekday, departure hour (12-31 values), carrier (18 levels), origin and destination
    airports (300 levels each, Zipf-like), distance (~1,500 values), scheduled duration;
    target the arrival delay in minutes (continuous, heavy-tailed; regression)."""
    n = 327_000 if n is None else n
    rng = np.random.default_rng(seed)
    month = rng.integers(1, 13, n).astype(float)
    day = rng.integers(1, 32, n).astype(float)
    weekday = rng.integers(1, 8, n).astype(float)
    hour = np.clip(np.round(rng.normal(13.5, 4.5, n)), 5, 23)
    car_c, carrier = _cat(rng, n, 18, None, "car")
    org_c, origin = _cat(rng, n, 300, None, "ap")
    dst_c, dest = _cat(rng, n, 300, None, "ap")
    base = rng.lognormal(6.5, 0.6, 300)
    distance = np.round(np.abs(base[org_c] - base[dst_c]) + 80, -1)
    duration = np.round(distance / 7.5 + 25 + rng.normal(0, 5, n))
    airport_delay = rng.normal(0, 6, 300)
    carrier_delay = rng.normal(0, 5, 18)
    delay = (airport_delay[org_c] + 0.5 * airport_delay[dst_c] + carrier_delay[car_c]
             + 0.9 * (hour - 13.5) + 3 * np.isin(month, (6, 7, 12)) + 0.01 * distance
             + rng.standard_t(2.5, n) * 12)
    df = pd.DataFrame({"month": month, "day": day, "weekday": weekday, "hour": hour,
                       "carrier": carrier, "origin": origin, "dest": dest,
                       "distance": distance, "duration": duration})
    return df, np.round(delay).astype(np.float64), "regression"


def covertype(n: int | None = None, seed: int = 0):
    """Shaped like the forest covertype table's numeric part (here 350,000 rows, 10 numeric
    features with 7 to ~300 distinct values each, two categorical: wilderness area 4 levels,
    soil type 40); target one of 7 cover types (classification)."""
    n = 350_000 if n is None else n
    rng = np.random.default_rng(seed)
    elev = np.round(rng.normal(2960, 280, n) / 10) * 10
    aspect = np.round(rng.uniform(0, 360, n) / 5) * 5
    slope = np.clip(np.round(rng.gamma(3.5, 4.0, n)), 0, 66)
    hdist = np.round(rng.gamma(1.5, 180, n) / 30) * 30
    vdist = np.round(rng.normal(45, 55, n) / 3) * 3
    road = np.round(rng.gamma(2.0, 1200, n) / 30) * 30
    hill9 = np.clip(np.round(rng.normal(212, 27, n)), 0, 254)
    hill12 = np.clip(np.round(rng.normal(223, 20, n)), 0, 254)
    hill3 = np.clip(np.round(rng.normal(142, 38, n)), 0, 254)
    fire = np.round(rng.gamma(2.0, 1000, n) / 30) * 30
    wa_c, wild = _cat(rng, n, 4, [0.45, 0.05, 0.44, 0.06], "wa")
    soil_c, soil = _cat(rng, n, 40, None, "soil")
    score = np.stack([
        -(elev - 3300) ** 2 / 1e5, -(elev - 2900) ** 2 / 1e5 + 0.3,
        -(elev - 2400) ** 2 / 1e5 + 0.2 * (slope > 20), -(elev - 2200) ** 2 / 5e4,
        -(elev - 2700) ** 2 / 1e5 + 0.4 * (wa_c == 1), -(elev - 2500) ** 2 / 1e5
        + 0.2 * (soil_c % 5 == 0), -(elev - 3400) ** 2 / 1e5 + 0.5 * (hdist > 400)])
    score += 0.002 * (road / 100) * np.array([[1], [0.5], [0], [-1], [0], [0.2], [1]])
    score += rng.gumbel(0, 0.6, score.shape)
    label = np.argmax(score, axis=0)
    df = pd.DataFrame({"elevation": elev, "aspect": aspect, "slope": slope,
                       "hydro_h": hdist, "hydro_v": vdist, "road": road, "hill9": hill9,
                       "hill12": hill12, "hill3": hill3, "fire": fire, "wilderness": wild,
                       "soil": soil})
    return df, label.astype(np.int64), "classification"


def churn(n: int | None = None, seed: int = 0, noise_levels: int = 0):
    """Shaped like the telecom churn table (5,000 rows): a 51-level ``state`` column that does
    not matter, area code (3 levels), two yes/no plans, call minutes, charges and counts,
    service calls; binary target (churn, ~14%). ``noise_levels > 0`` adds a pure-noise
    categorical column ``noise`` of that many levels."""
    n = 5_000 if n is None else n
    rng = np.random.default_rng(seed)
    _, state = _cat(rng, n, 51, np.ones(51), "st")
    _, area = _cat(rng, n, 3, [0.25, 0.5, 0.25], "area")
    intl_c, intl = _cat(rng, n, 2, [0.9, 0.1], "intl")
    vm_c, vmail = _cat(rng, n, 2, [0.72, 0.28], "vm")
    day_min = np.round(np.clip(rng.normal(180, 54, n), 0, 350), 1)
    eve_min = np.round(np.clip(rng.normal(200, 50, n), 0, 360), 1)
    night_min = np.round(np.clip(rng.normal(200, 50, n), 20, 390), 1)
    intl_min = np.round(np.clip(rng.normal(10, 2.8, n), 0, 20), 1)
    day_calls = np.round(rng.normal(100, 20, n))
    calls = rng.poisson(1.5, n).astype(float)
    account = np.round(rng.normal(100, 40, n)).clip(1, 240)
    vm_msgs = np.where(vm_c == 1, np.round(rng.normal(29, 7, n)), 0.0)
    logit = (-3.2 + 0.025 * (day_min - 180) + 0.45 * np.maximum(calls - 3, 0) * 2.5
             + 2.0 * (intl_c == 1) - 0.9 * (vm_c == 1) + 0.006 * (eve_min - 200)
             + 1.6 * (day_min > 265) + 0.2 * (intl_min > 13))
    label = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    df = pd.DataFrame({"state": state, "account_length": account, "area_code": area,
                       "intl_plan": intl, "voice_mail_plan": vmail, "vmail_messages": vm_msgs,
                       "day_minutes": day_min, "day_calls": day_calls,
                       "day_charge": np.round(day_min * 0.17, 2), "eve_minutes": eve_min,
                       "eve_charge": np.round(eve_min * 0.085, 2), "night_minutes": night_min,
                       "night_charge": np.round(night_min * 0.045, 2), "intl_minutes": intl_min,
                       "intl_charge": np.round(intl_min * 0.27, 2),
                       "service_calls": calls})
    if noise_levels:
        df["noise"] = _cat(rng, n, noise_levels, np.ones(noise_levels), "nz")[1]
    return df, label, "classification"


TABLES = {"diamonds": diamonds, "adult": adult, "flights": flights, "covertype": covertype,
          "churn": churn}


def ordinal(df: pd.DataFrame) -> np.ndarray:
    """The table as float32 numbers: category columns as their codes, NaN for holes."""
    out = np.empty(df.shape, dtype=np.float32)
    for j, c in enumerate(df.columns):
        col = df[c]
        if isinstance(col.dtype, pd.CategoricalDtype):
            codes = col.cat.codes.to_numpy().astype(np.float32)
            codes[codes < 0] = np.nan
            out[:, j] = codes
        else:
            out[:, j] = col.to_numpy(dtype=np.float32)
    return out


def describe(df: pd.DataFrame) -> str:
    """One line per column: kind, distinct values, share missing."""
    lines = []
    for c in df.columns:
        col = df[c]
        kind = "cat" if isinstance(col.dtype, pd.CategoricalDtype) else "num"
        lines.append(f"{c:<16}{kind:<5}{col.nunique():>8}{col.isna().mean():>8.3f}")
    return "\n".join(lines)
