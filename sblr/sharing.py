"""A server-side store for uploaded data, so that a link can bring the same data back.

The dashboard keeps every upload here under an unguessable id (128 random bits from
:mod:`secrets`) and puts the id in the page's address (``?data=<id>``): a reload keeps the
upload, and anyone given the link sees the same data.  The store is bounded:

- one item (the data file and its label file) at most ``max_item_mb``;
- all items together at most ``max_total_mb``: the least recently used go first;
- an item expires ``ttl_seconds`` after it was stored (7 days by default), used or not.

Only whoever stored an item may remove it: :meth:`UploadStore.put` returns, beside the id,
an owner key (128 more random bits) that never goes into the shared link; the store keeps
only its SHA-256 and compares in constant time.  A link is a capability to read; the owner
key is the capability to remove.

Items live in one folder each under ``root`` (written to a temporary folder and renamed,
so a reader never sees half an item).  Ids are checked against their exact format before
any path is built from them.  Nothing here imports Streamlit.

Examples
--------
>>> import tempfile
>>> store = UploadStore(tempfile.mkdtemp())
>>> token, owner_key = store.put({"data": b"x,y\\n1,a\\n"}, {"name": "tiny.csv"})
>>> len(token) >= 22 and owner_key != token
True
>>> parts, meta = store.get(token)
>>> parts["data"], meta["name"]
(b'x,y\\n1,a\\n', 'tiny.csv')
>>> store.delete(token, "a guess")
Traceback (most recent call last):
...
sblr.sharing.NotOwner: Only the person who shared this data can remove it.
>>> store.delete(token, owner_key)
True
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import tempfile
import threading
import time
from pathlib import Path

from sblr.exceptions import DataError

__all__ = ["ID_BYTES", "NotOwner", "SharedDataMissing", "UploadStore", "is_share_id"]

#: Random bytes of an id (128 bits), written as 22 URL-safe base64 characters.
ID_BYTES = 16
_ID = re.compile(r"[A-Za-z0-9_-]{22}")
#: The parts an item may hold (file names inside its folder).
PARTS = ("data", "xml")


class SharedDataMissing(LookupError):
    """The data of a link is not (or no longer) in the store.

    Attributes
    ----------
    reason : {"expired", "unknown"}
        ``"expired"``: it was stored, and its time is up; ``"unknown"``: not in the store
        (never stored, removed, or evicted to make room).
    """

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


class NotOwner(PermissionError):
    """An attempt to remove an item without its owner key."""


def _key_hash(owner_key) -> str:
    return hashlib.sha256(str(owner_key).encode("utf-8", "surrogatepass")).hexdigest()


def is_share_id(text) -> bool:
    """True when ``text`` has the exact form of an id (nothing else is ever made a path)."""
    return isinstance(text, str) and _ID.fullmatch(text) is not None


class UploadStore:
    """Uploaded files under unguessable ids, with a size cap, a total cap and an expiry.

    Parameters
    ----------
    root : path
        Folder of the store (created; it must belong to this process's account and be
        closed to others, else :class:`PermissionError`).
    max_item_mb : float, default 60
    max_total_mb : float, default 2048
    ttl_seconds : float, default 7 days
    clock : callable, default time.time
        Seconds since the epoch (tests pass a fake clock).
    """

    def __init__(
        self,
        root,
        *,
        max_item_mb: float = 60,
        max_total_mb: float = 2048,
        ttl_seconds: float = 7 * 86400,
        clock=time.time,
    ):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        try:  # the uploads are the users' data: not readable by other accounts
            os.chmod(self.root, 0o700)
        except OSError:
            pass
        if hasattr(os, "getuid"):
            # A folder another account made first (e.g. in a shared /tmp) stays theirs: they
            # could list every id, and an id is the key to its data. Refuse it.
            info = self.root.stat()
            if info.st_uid != os.getuid() or info.st_mode & 0o077:
                raise PermissionError(
                    f"The share store {str(self.root)!r} belongs to another account or is open "
                    "to other accounts; set SBLR_SHARE_DIR to a folder of this server's own."
                )
        self.max_item_bytes = int(max_item_mb * 2**20)
        self.max_total_bytes = int(max_total_mb * 2**20)
        self.ttl_seconds = float(ttl_seconds)
        self.clock = clock
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ public
    def put(self, parts: dict, meta: dict) -> tuple[str, str]:
        """Store ``parts`` (``{"data": bytes, "xml": bytes}``; ``"xml"`` optional) with
        ``meta`` (JSON-serialisable: the file name and the loader's options).

        Returns
        -------
        token : str
            The item's id (goes into the shared link).
        owner_key : str
            128 random bits that :meth:`delete` asks for; give it only to whoever stored
            the item (the store keeps its hash, not the key).

        Raises
        ------
        DataError
            The item is larger than ``max_item_mb``, or a part is not one of ``"data"``,
            ``"xml"``.
        """
        unknown = set(parts) - set(PARTS)
        if unknown or "data" not in parts:
            raise DataError(
                f"An item holds a 'data' part and optionally 'xml'; got {sorted(parts)}."
            )
        size = sum(len(p) for p in parts.values())
        if size > self.max_item_bytes:
            raise DataError(
                f"The upload is {size / 2**20:.0f} MB; a shared link holds at most "
                f"{self.max_item_bytes / 2**20:.0f} MB."
            )
        token = secrets.token_urlsafe(ID_BYTES)
        owner_key = secrets.token_urlsafe(ID_BYTES)
        now = self.clock()
        tmp = Path(tempfile.mkdtemp(prefix=".incoming-", dir=self.root))
        try:
            for name, data in parts.items():
                (tmp / name).write_bytes(bytes(data))
            info = {
                "created": now,
                "size": size,
                "parts": sorted(parts),
                "meta": meta,
                "owner": _key_hash(owner_key),
            }
            (tmp / "item.json").write_text(json.dumps(info), encoding="utf-8")
            (tmp / "accessed").write_text(repr(now), encoding="utf-8")
            with self._lock:
                os.rename(tmp, self.root / token)
                self._evict(keep=token)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return token, owner_key

    def get(self, token):
        """``(parts, meta)`` of an id; marks it used (least recently used goes first).

        Raises
        ------
        SharedDataMissing
            ``reason="expired"`` when its time is up (it is removed), else ``"unknown"``.
        """
        if not is_share_id(token):
            raise SharedDataMissing("unknown", "This link's data id is not valid.")
        folder = self.root / token
        with self._lock:
            info = self._info(folder)
            if info is None:
                raise SharedDataMissing(
                    "unknown",
                    "This link's data is not on the server: it was removed, or made room for "
                    "newer uploads.",
                )
            if self.clock() - info["created"] > self.ttl_seconds:
                shutil.rmtree(folder, ignore_errors=True)
                days = self.ttl_seconds / 86400
                raise SharedDataMissing(
                    "expired", f"This link's data has expired (links keep data for {days:g} days)."
                )
            parts = {name: (folder / name).read_bytes() for name in info["parts"]}
            (folder / "accessed").write_text(repr(self.clock()), encoding="utf-8")
        return parts, info["meta"]

    def is_owner(self, token, owner_key) -> bool:
        """Whether ``owner_key`` is the key :meth:`put` returned for ``token`` (constant time)."""
        if not is_share_id(token) or not isinstance(owner_key, str) or not owner_key:
            return False
        info = self._info(self.root / token)
        stored = info.get("owner") if info else None
        # an item stored before owner keys existed has no owner: nobody may remove it early
        return isinstance(stored, str) and hmac.compare_digest(stored, _key_hash(owner_key))

    def expires_at(self, token):
        """Seconds since the epoch at which the item expires, or None when it is not stored."""
        info = self._info(self.root / token) if is_share_id(token) else None
        return None if info is None else info["created"] + self.ttl_seconds

    def delete(self, token, owner_key) -> bool:
        """Remove an item; True if it was there, False if it was not.

        Raises
        ------
        NotOwner
            ``owner_key`` is not the key :meth:`put` returned for this item.
        """
        if not is_share_id(token):
            return False
        with self._lock:
            folder = self.root / token
            if not folder.is_dir():
                return False
            if not self.is_owner(token, owner_key):
                raise NotOwner("Only the person who shared this data can remove it.")
            shutil.rmtree(folder, ignore_errors=True)
            return True

    def total_bytes(self) -> int:
        """Bytes held by all items."""
        return sum(info["size"] for _, info, _ in self._items())

    # ------------------------------------------------------------------ internals
    @staticmethod
    def _info(folder: Path):
        try:
            return json.loads((folder / "item.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _items(self):
        """(id, info, last access) of every complete item."""
        out = []
        for folder in self.root.iterdir():
            if not is_share_id(folder.name):
                continue
            info = self._info(folder)
            if info is None:
                continue
            try:
                accessed = float((folder / "accessed").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                accessed = info["created"]
            out.append((folder.name, info, accessed))
        return out

    def _evict(self, keep: str) -> None:
        now = self.clock()
        items = []
        for token, info, accessed in self._items():
            if now - info["created"] > self.ttl_seconds:
                shutil.rmtree(self.root / token, ignore_errors=True)
            else:
                items.append((accessed, token, info["size"]))
        total = sum(size for _, _, size in items)
        for _, token, size in sorted(items):  # least recently used first
            if total <= self.max_total_bytes:
                break
            if token == keep:
                continue
            shutil.rmtree(self.root / token, ignore_errors=True)
            total -= size
