"""Real data: daily stock prices read with pandas and appended; VWAP per ticker, daily bars and the
newest row per ticker equal what pandas computes from the same frame."""

from __future__ import annotations

import numpy as np
import pandas as pd

import varve

from conftest import DATA


def test_stocks_match_pandas(local_lake):
    df = pd.read_csv(DATA / "stocks.csv.gz", parse_dates=["Date"])
    df["Date"] = df["Date"].dt.tz_localize("UTC")
    t = local_lake.create_table("market.stocks", df, time_column="Date", series_key=["Ticker"], partition="month")
    assert t.info()["rows"] == len(df) == 12154

    vwap = local_lake.sql(
        'SELECT "Ticker", sum("Close" * "Volume") / sum("Volume") AS vwap FROM market.stocks GROUP BY 1 ORDER BY 1'
    ).to_pandas().set_index("Ticker")["vwap"]
    expected = (df["Close"] * df["Volume"]).groupby(df["Ticker"]).sum() / df.groupby("Ticker")["Volume"].sum()
    np.testing.assert_allclose(vwap.sort_index().values, expected.sort_index().values, rtol=1e-12)

    bars = local_lake.sql(
        """SELECT "Ticker", time_bucket(INTERVAL '1 day', "Date") AS day, min("Low") AS low, max("High") AS high,
                  sum("Volume") AS volume, count(*) AS n
           FROM market.stocks GROUP BY 1, 2 ORDER BY 1, 2"""
    ).to_pandas()
    g = df.groupby(["Ticker", df["Date"].dt.floor("D")]).agg(low=("Low", "min"), high=("High", "max"),
                                                             volume=("Volume", "sum"), n=("Close", "size"))
    assert len(bars) == len(g)
    np.testing.assert_allclose(bars["low"].values, g["low"].values)
    np.testing.assert_allclose(bars["high"].values, g["high"].values)
    assert (bars["volume"].values == g["volume"].values).all()

    latest = t.latest().to_pandas().sort_values("Ticker").reset_index(drop=True)
    expected_latest = df.sort_values("Date").groupby("Ticker").tail(1).sort_values("Ticker").reset_index(drop=True)
    assert list(latest["Ticker"]) == list(expected_latest["Ticker"])
    assert (latest["Date"] == expected_latest["Date"]).all()
    np.testing.assert_allclose(latest["Close"].values, expected_latest["Close"].values)
