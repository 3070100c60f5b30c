"""A server-side store for uploaded data, so that a link can bring the same data back.

The dashboard keeps every upload here under an unguessable id (128 random bits from
:mod:`secrets`) and puts the id in the page's address (``?data=<id>``): a reload keeps the
upload, and anyone given the link sees the same data.  The store is bounded:

- one item (the data file and its label file) at most ``max_item_mb``;
- all items together at most ``max_total_mb`` of disk, counted as the disk holds them (the
  blocks of every file and folder, not only the bytes uploaded: 1,500 tiny items took 1,369
  times their bytes), and at most ``max_items`` items: the least recently used go first;
- an item expires ``ttl_seconds`` after it was stored (7 days by default), used or not; its
  folder then keeps only a small note, so every later visitor is told "expired" (not
  "unknown"), until the note itself is 2 × ``ttl_seconds`` old.

The store keeps an index of its items in memory (read once from the folder when the store
is made): an upload, a read and an eviction cost O(1) work, not a scan of every item under
the lock that opening a link takes too (~8 s an upload at 100,000 items).  One server
process owns a store folder.  The folder is made safely: never through a symbolic link,
owned by this process's account and closed to others, else refused; if it disappears while
the server runs, it is made again at the next upload.

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
import stat
import tempfile
import threading
import time
from collections import OrderedDict
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


def _owners(info) -> list[str]:
    """The owner hashes of an item (one per uploader of the same bytes)."""
    if not info:
        return []
    owners = info.get("owners")
    if isinstance(owners, list):
        return [h for h in owners if isinstance(h, str)]
    single = info.get("owner")  # an item of the first layout: one owner
    return [single] if isinstance(single, str) else []


def _content_digest(parts: dict, meta: dict) -> str:
    """SHA-256 of an item's parts and options, each length-prefixed (no two different
    uploads share it by moving bytes across parts)."""
    h = hashlib.sha256()
    for name in sorted(parts):
        for chunk in (name.encode(), bytes(parts[name])):
            h.update(len(chunk).to_bytes(8, "big"))
            h.update(chunk)
    options = json.dumps(meta, sort_keys=True, default=str).encode()
    h.update(len(options).to_bytes(8, "big"))
    h.update(options)
    return h.hexdigest()


def is_share_id(text) -> bool:
    """True when ``text`` has the exact form of an id (nothing else is ever made a path)."""
    return isinstance(text, str) and _ID.fullmatch(text) is not None


class UploadStore:
    """Uploaded files under unguessable ids, with caps on size, disk, count, and an expiry.

    Parameters
    ----------
    root : path
        Folder of the store (created; it must belong to this process's account, be closed
        to others and not be a symbolic link, else :class:`PermissionError`).
    max_item_mb : float, default 60
    max_total_mb : float, default 2048
        Disk the items may take together, as the file system counts it.
    max_items : int, default 10000
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
        max_items: int = 10_000,
        ttl_seconds: float = 7 * 86400,
        clock=time.time,
    ):
        self.root = Path(root)
        self.max_item_bytes = int(max_item_mb * 2**20)
        self.max_total_bytes = int(max_total_mb * 2**20)
        self.max_items = int(max_items)
        self.ttl_seconds = float(ttl_seconds)
        self.clock = clock
        self._lock = threading.Lock()
        self._make_root()
        # id -> disk bytes, least recently used first; and id -> creation time, oldest first
        self._used: OrderedDict[str, int] = OrderedDict()
        self._created: OrderedDict[str, float] = OrderedDict()
        self._expired: OrderedDict[str, float] = OrderedDict()  # notes: id -> expiry time
        self._by_digest: dict[str, str] = {}  # the content's digest -> its id (stored once)
        self._digest_of: dict[str, str] = {}  # and back
        self._disk = 0
        self._load_index()

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
        digest = _content_digest(parts, meta)
        with self._lock:
            if not self.root.is_dir() or self.root.is_symlink():  # removed while serving
                self._make_root()
                self._forget_all()
            same = self._by_digest.get(digest)
            if same is not None and self._add_owner(same, owner_key):
                # identical bytes and options: stored once; this uploader is one more owner
                self._used.move_to_end(same)
                return same, owner_key
        tmp = Path(tempfile.mkdtemp(prefix=".incoming-", dir=self.root))
        try:
            for name, data in parts.items():
                (tmp / name).write_bytes(bytes(data))
            info = {
                "created": now,
                "size": size,
                "parts": sorted(parts),
                "meta": meta,
                "owners": [_key_hash(owner_key)],
                "digest": digest,
            }
            (tmp / "item.json").write_text(json.dumps(info), encoding="utf-8")
            (tmp / "accessed").write_text(repr(now), encoding="utf-8")
            disk = _disk_bytes(tmp)
            with self._lock:
                os.rename(tmp, self.root / token)
                self._used[token] = disk
                self._created[token] = now
                self._by_digest[digest] = token
                self._digest_of[token] = digest
                self._disk += disk
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
            self._expire_due()
            if token in self._expired:
                raise self._expired_error()
            info = self._info(folder) if token in self._used else None
            if info is None or "parts" not in info:
                raise SharedDataMissing(
                    "unknown",
                    "This link's data is not on the server: it was removed, or made room for "
                    "newer uploads.",
                )
            if self.clock() - info["created"] > self.ttl_seconds:
                self._expire(token)
                raise self._expired_error()
            try:
                parts = {name: (folder / name).read_bytes() for name in info["parts"]}
            except OSError:
                self._drop(token)
                raise SharedDataMissing(
                    "unknown", "This link's data is no longer readable on the server."
                ) from None
            (folder / "accessed").write_text(repr(self.clock()), encoding="utf-8")
            self._used.move_to_end(token)
        return parts, info["meta"]

    def is_owner(self, token, owner_key) -> bool:
        """Whether ``owner_key`` is the key :meth:`put` returned for ``token`` (constant time)."""
        if not is_share_id(token) or not isinstance(owner_key, str) or not owner_key:
            return False
        info = self._info(self.root / token) if token in self._used else None
        # an item stored before owner keys existed has no owner: nobody may remove it early
        wanted = _key_hash(owner_key)
        return any(hmac.compare_digest(h, wanted) for h in _owners(info))

    def expires_at(self, token):
        """Seconds since the epoch at which the item expires, or None when it is not stored."""
        created = self._created.get(token) if is_share_id(token) else None
        return None if created is None else created + self.ttl_seconds

    def delete(self, token, owner_key) -> bool:
        """Remove an owner's item; True if it was there, False if it was not.

        The same bytes uploaded by several people are stored once, with one owner key each:
        removing one owner's claim keeps the data for the others' links, and the data goes
        with the last claim.

        Raises
        ------
        NotOwner
            ``owner_key`` is not a key :meth:`put` returned for this item.
        """
        if not is_share_id(token):
            return False
        with self._lock:
            if token not in self._used:
                return False
            if not self.is_owner(token, owner_key):
                raise NotOwner("Only the person who shared this data can remove it.")
            folder = self.root / token
            info = self._info(folder) or {}
            wanted = _key_hash(owner_key)
            left = [h for h in _owners(info) if not hmac.compare_digest(h, wanted)]
            if left:
                info.pop("owner", None)
                info["owners"] = left
                (folder / "item.json").write_text(json.dumps(info), encoding="utf-8")
            else:
                self._drop(token)
            return True

    def _add_owner(self, token, owner_key) -> bool:
        """Add an owner to a stored item (lock held); False when it is gone or expired."""
        folder = self.root / token
        info = self._info(folder)
        if (
            info is None
            or "parts" not in info
            or token not in self._used
            or self.clock() - info["created"] > self.ttl_seconds
        ):
            return False
        info["owners"] = [*_owners(info), _key_hash(owner_key)]
        info.pop("owner", None)
        try:
            (folder / "item.json").write_text(json.dumps(info), encoding="utf-8")
        except OSError:
            return False
        return True

    def total_bytes(self) -> int:
        """Disk taken by all items (their files and folders, as the file system counts)."""
        return self._disk

    def __len__(self) -> int:
        return len(self._used)

    # ------------------------------------------------------------------ internals
    def _make_root(self):
        """Create the folder without following a symbolic link; refuse one that is a link, is
        another account's, or is open to other accounts and cannot be closed."""
        try:
            self.root.mkdir(mode=0o700, parents=True)
        except FileExistsError:
            pass
        info = os.lstat(self.root)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            raise PermissionError(
                f"The share store {str(self.root)!r} is a symbolic link or not a folder; set "
                "SBLR_SHARE_DIR to a folder of this server's own."
            )
        if hasattr(os, "getuid"):
            # A folder another account made first (e.g. in a shared /tmp) stays theirs: they
            # could list every id, and an id is the key to its data. Refuse it.
            if info.st_uid != os.getuid():
                raise PermissionError(
                    f"The share store {str(self.root)!r} belongs to another account; set "
                    "SBLR_SHARE_DIR to a folder of this server's own."
                )
            if info.st_mode & 0o077:  # ours, but open: closed through the folder itself
                fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
                try:
                    os.fchmod(fd, 0o700)
                finally:
                    os.close(fd)

    def _load_index(self):
        """One scan when the store is made: the items, the expiry notes, the disk they take."""
        items, notes = [], []
        for folder in self.root.iterdir():
            if not is_share_id(folder.name) or folder.is_symlink():
                continue
            info = self._info(folder)
            if info is None:
                continue
            if "expired_at" in info:
                notes.append((info["expired_at"], folder.name))
                continue
            try:
                accessed = float((folder / "accessed").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                accessed = info.get("created", 0.0)
            items.append((accessed, info.get("created", 0.0), folder.name, _disk_bytes(folder)))
            if info.get("digest"):
                self._by_digest[info["digest"]] = folder.name
                self._digest_of[folder.name] = info["digest"]
        for _, _created, token, disk in sorted(items):
            self._used[token] = disk
            self._disk += disk
        for created, token in sorted((c, t) for _, c, t, _ in items):
            self._created[token] = created
        for expired_at, token in sorted(notes):
            self._expired[token] = expired_at
        with self._lock:
            self._expire_due()
            self._evict(keep=None)

    def _forget_all(self):
        self._by_digest.clear()
        self._digest_of.clear()
        self._used.clear()
        self._created.clear()
        self._expired.clear()
        self._disk = 0

    @staticmethod
    def _info(folder: Path):
        try:
            return json.loads((folder / "item.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _expired_error(self):
        days = self.ttl_seconds / 86400
        return SharedDataMissing(
            "expired", f"This link's data has expired (links keep data for {days:g} days)."
        )

    def _drop(self, token):
        """Remove an item's folder and its index entries (lock held)."""
        self._disk -= self._used.pop(token, 0)
        self._created.pop(token, None)
        digest = self._digest_of.pop(token, None)
        if digest is not None and self._by_digest.get(digest) == token:
            del self._by_digest[digest]
        shutil.rmtree(self.root / token, ignore_errors=True)

    def _expire(self, token):
        """Replace an item by a small note that it expired (lock held)."""
        self._drop(token)
        now = self.clock()
        folder = self.root / token
        try:
            folder.mkdir(mode=0o700)
            (folder / "item.json").write_text(json.dumps({"expired_at": now}), encoding="utf-8")
        except OSError:
            return
        self._expired[token] = now
        while len(self._expired) > self.max_items:  # the notes are bounded too
            old, _ = self._expired.popitem(last=False)
            shutil.rmtree(self.root / old, ignore_errors=True)

    def _expire_due(self):
        """Expire the items whose time is up, oldest first, and drop old notes (lock held):
        O(1) a call when nothing is due."""
        now = self.clock()
        while self._created:
            token, created = next(iter(self._created.items()))
            if now - created <= self.ttl_seconds:
                break
            self._expire(token)
        while self._expired:
            token, at = next(iter(self._expired.items()))
            if now - at <= 2 * self.ttl_seconds:
                break
            self._expired.popitem(last=False)
            shutil.rmtree(self.root / token, ignore_errors=True)

    def _evict(self, keep) -> None:
        """Least recently used items out until the disk and count caps hold (lock held)."""
        self._expire_due()
        for token in list(self._used):
            if self._disk <= self.max_total_bytes and len(self._used) <= self.max_items:
                break
            if token != keep:
                self._drop(token)


def _disk_bytes(folder: Path) -> int:
    """Disk a folder and its files take, as the file system counts (blocks, not bytes)."""
    total = 0
    for path in (folder, *folder.iterdir()):
        try:
            info = os.lstat(path)
        except OSError:
            continue
        blocks = getattr(info, "st_blocks", None)
        total += blocks * 512 if blocks is not None else max(info.st_size, 4096)
    return total
