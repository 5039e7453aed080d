"""Type stubs of the native module (the public API is in ``varve/__init__.py``)."""

from typing import Any, Dict, List, Optional

import pyarrow as pa

__version__: str

def partition_for_data(rows: int, span_us: int, whole: bool) -> str: ...
def parse_bytes(text: str) -> int: ...

class NativeError(Exception):
    """args: (code: str, message: str, retryable: bool)."""

class NativeLake:
    def __init__(self, url: str, options: Optional[Dict[str, str]] = None) -> None: ...
    def url(self) -> str: ...
    def create_table(
        self,
        name: str,
        schema: pa.Schema,
        time_column: Optional[str] = None,
        series_key: List[str] = ...,
        partition: str = "day",
        dedup: str = "none",
    ) -> None: ...
    def drop_table(self, name: str) -> None: ...
    def tables(self) -> List[str]: ...
    def cache_stats(self) -> Dict[str, int]: ...
    def exists(self, name: str) -> bool: ...
    def append(
        self,
        name: str,
        data: Any,
        batch_id: Optional[str] = None,
        note: Optional[str] = None,
        timezone: Optional[str] = None,
        maintain: bool = True,
        truncate_ns: bool = False,
    ) -> Dict[str, Any]: ...
    def import_files(
        self,
        name: str,
        paths: List[str],
        format: Optional[str] = None,
        time_columns: List[str] = ...,
        time_name: str = "time",
        series_key: List[str] = ...,
        partition: Optional[str] = None,
        plain: bool = False,
        null_values: List[str] = ...,
        delimiter: Optional[str] = None,
        skip_rows: int = 0,
        time_format: Optional[str] = None,
        timezone: Optional[str] = None,
        time_unit: Optional[str] = None,
        truncate_ns: bool = False,
        rename_duplicates: bool = False,
        batch_id: Optional[str] = None,
        note: Optional[str] = None,
        dedup: str = "none",
    ) -> Dict[str, Any]: ...
    def sql(
        self,
        query: str,
        timeout: Optional[float] = None,
        max_rows: Optional[int] = None,
        memory_limit: Optional[int] = None,
    ) -> pa.Table: ...
    def latest(self, name: str) -> pa.Table: ...
    def describe(self, name: str) -> Dict[str, Any]: ...
    def info(self, name: str) -> Dict[str, Any]: ...
    def history(self, name: str) -> List[Dict[str, Any]]: ...
    def maintain(
        self,
        name: str,
        compact: bool = True,
        retention: bool = True,
        expire: bool = True,
        orphans: bool = True,
        dry_run: bool = False,
        orphan_age: Optional[str] = None,
        snapshot_retention: Optional[str] = None,
        rollups: bool = True,
        drop_all_rows: bool = False,
    ) -> Dict[str, Any]: ...
    def delete(self, name: str, predicate: Optional[str] = None) -> Dict[str, Any]: ...
    def set_properties(self, name: str, set: Dict[str, str], unset: List[str]) -> None: ...
    def create_rollup(self, sql: str) -> Optional[Dict[str, Any]]: ...
    def drop_rollup(self, name: str, if_exists: bool = False) -> bool: ...
    def rollups(self, source: Optional[str] = None) -> List[Dict[str, Any]]: ...
    def refresh_rollup(self, name: str) -> Dict[str, Any]: ...
