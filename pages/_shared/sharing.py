"""A server-side store for uploaded data, so that a link can bring the same data back.

The dashboard keeps every upload here under an unguessable id (128 random bits from
:mod:`secrets`) and puts the id in the page's address (``?data=<id>``): a reload keeps the
upload, and anyone given the link sees the same data.  The store is bounded:

- one item (the data file and its label file) at most ``max_item_mb``;
- all items together at most ``max_total_mb`` of disk, counted as the disk holds them (the
  blocks of every file and folder, not only the bytes uploaded: 1,500 tiny items took 1,369
  times their bytes), and at most ``max_items`` items. When an upload would pass a cap, the
  uploader's own oldest items go first; then, by default (``evict="lru"``), the least
  recently used of anybody's; with ``evict="fair"`` (the dashboard), by fair shares (below);
- with ``max_per_person``, one person (an opaque id the caller passes to :meth:`put`: the
  dashboard's browser cookie) keeps at most that many items: their oldest go first, however
  many sessions they open;
- an item expires ``ttl_seconds`` after it was stored (7 days by default), used or not; its
  folder then keeps only a small note, so every later visitor is told "expired" (not
  "unknown"), until the note itself is 2 × ``ttl_seconds`` old.

The store keeps an index of its items in memory (read once from the folder when the store
is made): an upload, a read and an eviction cost O(1) work, not a scan of every item under
the lock that opening a link takes too (~8 s an upload at 100,000 items).  The folder is
made safely: never through a symbolic link, owned by this process's account and closed to
others, else refused; if it disappears while the server runs, it is made again at the next
upload.  The root may also be an fsspec URL (``s3://bucket/links``), and several servers
(replicas of one dashboard behind a proxy) may share one root: a server opens an item another
stored, and re-reads the list of items at most every ``rescan_seconds`` at an upload, so the
caps hold for the store as a whole.

**Fair shares** (``evict="fair"``). Every item counts for a *holder*, an opaque id the
caller passes to :meth:`put` beside the person: the dashboard's is the network address the
upload came from, so that a new cookie makes a new person but not a new holder. A holder's
use is the larger of its part of the disk cap and of the count cap; its *share* is the cap
divided by the number of holders (the uploader's included), so shares shrink as more people
keep links. When an upload passes a cap after the uploader's own oldest items are gone, the
holder furthest over its share loses its oldest item that nobody has opened (:meth:`get`),
then, when it has none, its least recently used one; again, until the caps hold. A holder
within its share never loses a link to somebody else's upload, however many cookies (or
sessions, or tabs) they use; a newcomer is refused (:class:`StoreFull`) only when their upload
would take more than their own share and every other holder is within theirs. What this
cannot tell apart: people behind one address (a class behind one NAT) are one holder, and
among them the oldest unopened links go first; an uploader with many addresses (many IPv6
prefixes) is many holders.

Only whoever stored an item may remove it: :meth:`UploadStore.put` returns, beside the id,
an owner key (128 more random bits) that never goes into the shared link; the store keeps
only its SHA-256 and compares in constant time.  A link is a capability to read; the owner
key is the capability to remove.

Items live in one folder each under ``root`` (written to a temporary folder and renamed,
so a reader never sees half an item; under a URL, the description ``item.json`` is written
last, so an item exists for readers only once it is whole).  Ids are checked against their
exact format before any path is built from them.  Nothing here imports Streamlit.

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
pages._shared.sharing.NotOwner: Only the person who shared this data can remove it.
>>> store.delete(token, owner_key)
True
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import os
import re
import secrets
import shutil
import stat
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from sblr.exceptions import DataError

__all__ = [
    "StoreLimits",
    "ID_BYTES",
    "NotOwner",
    "SharedDataMissing",
    "StoreFull",
    "UploadStore",
    "is_share_id",
]

#: Random bytes of an id (128 bits), written as 22 URL-safe base64 characters.
ID_BYTES = 16
_ID = re.compile(r"[A-Za-z0-9_-]{22}")
#: The parts an item may hold (file names inside its folder).
PARTS = ("data", "xml")
#: An item's description (its presence makes the item whole) and its time of last use.
ITEM, ACCESSED = "item.json", "accessed"


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


class StoreFull(DataError):
    """An upload the store cannot take without removing a link of somebody within their fair
    share (``evict="fair"``): the upload has no link."""


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


@dataclass(frozen=True)
class StoreLimits:
    """The caps of an :class:`UploadStore`.

    Attributes
    ----------
    max_item_mb : float, default 60
    max_total_mb : float, default 2048
        Disk the items may take together, as the file system counts it (bytes for a URL).
    max_items : int, default 10000
    ttl_seconds : float, default 7 days
    rescan_seconds : float, default 60
        How often (at most) an upload re-reads the list of items, to count the items other
        servers sharing the root stored or removed in the caps. The list only: an item's
        files are read once per server.
    max_per_person : int, optional
        Items one person (the ``person`` of :meth:`UploadStore.put`) keeps at once; their
        oldest claim goes when they store one more. Counted by this server since it started.
    evict : {"lru", "fair"}, default "lru"
        When an upload passes a cap after the uploader's own oldest items are gone: remove
        the least recently used items of anybody ("lru": a store of one user's links), or
        go by fair shares ("fair": a store many people share; see the module docstring).
    """

    max_item_mb: float = 60
    max_total_mb: float = 2048
    max_items: int = 10_000
    ttl_seconds: float = 7 * 86400
    rescan_seconds: float = 60
    max_per_person: int | None = None
    evict: str = "lru"


class UploadStore:
    """Uploaded files under unguessable ids, with caps on size, disk, count, and an expiry.

    Parameters
    ----------
    root : path or URL
        Where the items are kept. A folder of this machine (created; it must belong to this
        process's account, be closed to others and not be a symbolic link, else
        :class:`PermissionError`), or an fsspec URL such as ``s3://bucket/sblr-links`` (the
        storage's package installed, e.g. ``s3fs``; its access control is the storage's).
        Several servers (replicas of one dashboard) may share one root: each sees the
        others' items (see :meth:`get`).
    limits : StoreLimits, optional
        The caps on size, disk, count and age (defaults: :class:`StoreLimits`'s).
    clock : callable, default time.time
        Seconds since the epoch (tests pass a fake clock).
    """

    def __init__(self, root, limits: StoreLimits | None = None, *, clock=time.time):
        self._files = _folder(root)
        self.root = self._files.root
        lim = limits or StoreLimits()
        self.max_item_bytes = int(lim.max_item_mb * 2**20)
        self.max_total_bytes = int(lim.max_total_mb * 2**20)
        self.max_items = int(lim.max_items)
        self.ttl_seconds = float(lim.ttl_seconds)
        self.rescan_seconds = float(lim.rescan_seconds)
        self.clock = clock
        self.max_per_person = (
            None if lim.max_per_person is None else max(int(lim.max_per_person), 1)
        )
        if lim.evict not in ("lru", "fair"):
            raise ValueError(f'evict must be "lru" or "fair"; got {lim.evict!r}.')
        self.evict = lim.evict
        # person -> [(id, owner hash)], oldest first: the claims each person made here
        self._people: dict[str, list[tuple[str, str]]] = {}
        self._lock = threading.Lock()
        self._files.ensure()
        # id -> disk bytes, least recently used first; and id -> creation time, oldest first
        self._used: OrderedDict[str, int] = OrderedDict()
        self._created: OrderedDict[str, float] = OrderedDict()
        self._accessed: dict[str, float] = {}  # id -> last use (orders items found by a scan)
        self._expired: OrderedDict[str, float] = OrderedDict()  # notes: id -> expiry time
        self._by_digest: dict[str, str] = {}  # the content's digest -> its id (stored once)
        self._digest_of: dict[str, str] = {}  # and back
        self._holder: dict[str, str] = {}  # id -> whose share it counts in ("": not known)
        self._holding: dict[str, list[int]] = {}  # holder -> [disk, items] it holds
        self._opened: set[str] = set()  # ids read through get() since they were stored
        self._disk = 0
        self._scanned = -math.inf
        with self._lock:
            self._scan()

    # ------------------------------------------------------------------ public
    def put(
        self, parts: dict, meta: dict, *, person: str | None = None, holder: str | None = None
    ) -> tuple[str, str]:
        """Store ``parts`` (``{"data": bytes, "xml": bytes}``; ``"xml"`` optional) with
        ``meta`` (JSON-serialisable: the file name and the loader's options).

        ``person`` (optional, any string: e.g. a hash of the uploader's browser cookie) is
        whom the item counts for: ``max_per_person``, and whose items go first at a cap.
        ``holder`` (optional, default ``person``; e.g. a hash of the uploader's network
        address) is whose fair share it counts in (``evict="fair"``).

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
        StoreFull
            ``evict="fair"``, and the upload would take more than the uploader's share while
            every other holder is within theirs.
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
            if self._files.lost():  # removed while serving
                self._files.ensure()
                self._forget_all()
            elif now - self._scanned > self.rescan_seconds:
                self._scan()
            same = self._by_digest.get(digest)
            if same is not None and self._add_owner(same, owner_key):
                # identical bytes and options: stored once; this uploader is one more owner
                self._touch(same, now)
                self._claim(person, same, owner_key)
                return same, owner_key
        holder = str(person if holder is None else holder) if (holder or person) else ""
        info = {
            "created": now,
            "size": size,
            "parts": sorted(parts),
            "meta": meta,
            "owners": [_key_hash(owner_key)],
            "digest": digest,
            "holder": holder,
        }
        files = {name: bytes(data) for name, data in parts.items()}
        files[ACCESSED] = repr(now).encode()
        staged = None
        try:
            staged = self._files.stage(token, files)
            with self._lock:
                disk = self._files.publish(staged, token, json.dumps(info).encode())
                staged = None
                self._index(token, disk, (now, now), info)
                self._claim(person, token, owner_key)
                self._evict(keep=token, person=person)
        finally:
            self._files.discard(staged)
        return token, owner_key

    def get(self, token):
        """``(parts, meta)`` of an id; marks it used (least recently used goes first).

        An id this server has not seen (stored by another server sharing the root) is looked
        up in the store once and counted from then on; one this server knew and another
        removed is "unknown" from then on.

        Raises
        ------
        SharedDataMissing
            ``reason="expired"`` when its time is up (it is removed), else ``"unknown"``.
        """
        if not is_share_id(token):
            raise SharedDataMissing("unknown", "This link's data id is not valid.")
        with self._lock:
            self._expire_due()
            info = self._known(token)
            if token in self._expired:
                raise self._expired_error()
            if info is None or "parts" not in info:
                self._forget(token)
                raise SharedDataMissing(
                    "unknown",
                    "This link's data is not on the server: it was removed, or made room for "
                    "newer uploads.",
                )
            if self.clock() - info["created"] > self.ttl_seconds:
                self._expire(token)
                raise self._expired_error()
            try:
                parts = {name: self._files.read(token, name) for name in info["parts"]}
            except OSError:
                self._drop(token)
                raise SharedDataMissing(
                    "unknown", "This link's data is no longer readable on the server."
                ) from None
            now = self.clock()
            with contextlib.suppress(OSError):  # the time of use orders eviction: best effort
                self._files.write(token, ACCESSED, repr(now).encode())
            self._touch(token, now)
            self._opened.add(token)
        return parts, info["meta"]

    def is_owner(self, token, owner_key) -> bool:
        """Whether ``owner_key`` is the key :meth:`put` returned for ``token`` (constant time)."""
        if not is_share_id(token) or not isinstance(owner_key, str) or not owner_key:
            return False
        with self._lock:
            info = self._known(token)
        # an item stored before owner keys existed has no owner: nobody may remove it early
        wanted = _key_hash(owner_key)
        return any(hmac.compare_digest(h, wanted) for h in _owners(info))

    def expires_at(self, token):
        """Seconds since the epoch at which the item expires, or None when it is not stored."""
        if not is_share_id(token):
            return None
        with self._lock:
            if token not in self._used:
                self._known(token)
            created = self._created.get(token)
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
            info = self._known(token)
            if info is None or "parts" not in info:
                return False
            wanted = _key_hash(owner_key) if isinstance(owner_key, str) and owner_key else ""
            owners = _owners(info)
            if not any(hmac.compare_digest(h, wanted) for h in owners):
                raise NotOwner("Only the person who shared this data can remove it.")
            left = [h for h in owners if not hmac.compare_digest(h, wanted)]
            if left:
                info.pop("owner", None)
                info["owners"] = left
                self._files.write(token, ITEM, json.dumps(info).encode())
            else:
                self._drop(token)
            return True

    def total_bytes(self) -> int:
        """Disk taken by the items this server knows (their files and folders, as the file
        system counts; after a scan, every server's items)."""
        return self._disk

    def __len__(self) -> int:
        return len(self._used)

    # ------------------------------------------------------------------ internals
    def _info(self, token):
        """An item's ``item.json``, or None when it is not (or not wholly) there."""
        try:
            return json.loads(self._files.read(token, ITEM).decode("utf-8"))
        except (OSError, ValueError):
            return None

    def _known(self, token, *, reorder=True):
        """The info of an id (lock held), taking an item or note another server stored into
        the index; None when it is not in the store."""
        if token in self._expired:
            return None
        info = self._info(token)
        if info is None:
            return info
        if token in self._used:
            if "expired_at" in info and "parts" not in info:  # another server expired it
                self._forget(token)
                self._expired[token] = float(info["expired_at"])
            return info
        if "expired_at" in info:
            self._expired[token] = float(info["expired_at"])
            return info
        if "parts" in info:
            self._adopt(token, info, reorder=reorder)
        return info

    def _adopt(self, token, info, *, reorder=True):
        """Count an item another server stored (lock held)."""
        created = float(info.get("created", 0.0))
        try:
            accessed = float(self._files.read(token, ACCESSED).decode("utf-8"))
        except (OSError, ValueError):
            accessed = created
        disk = self._files.disk(token)
        self._index(token, disk, (created, accessed), info, reorder=reorder)
        if accessed > created:  # read since it was stored (get() writes the time of use)
            self._opened.add(token)

    def _index(self, token, disk, times, info, *, reorder=True):
        """Enter an item into the index (lock held; ``times``: its creation and last use;
        ``info``: its description, for its digest and holder), keeping both orders
        (``reorder=False``: the caller sorts them once after entering many), and count it in
        its holder's share."""
        created, accessed = times
        digest = info.get("digest")
        holder = info.get("holder") if isinstance(info.get("holder"), str) else ""
        self._holder[token] = holder
        held = self._holding.setdefault(holder, [0, 0])
        held[0] += disk
        held[1] += 1
        later_created = later_used = False
        if reorder and self._used:
            later_created = created < self._created[next(reversed(self._created))]
            later_used = accessed < self._accessed[next(reversed(self._used))]
        self._used[token] = disk
        self._disk += disk
        self._accessed[token] = accessed
        self._created[token] = created
        if digest:
            self._by_digest[digest] = token
            self._digest_of[token] = digest
        # an item another server stored, found after newer ones: back into both orders (a
        # sort per item found, once per server; never for this server's own uploads)
        if later_created or later_used:
            self._reorder()

    def _reorder(self):
        """Both orders sorted again from the times (lock held)."""
        self._created = OrderedDict(sorted(self._created.items(), key=lambda kv: kv[1]))
        self._used = OrderedDict(sorted(self._used.items(), key=lambda kv: self._accessed[kv[0]]))

    def _touch(self, token, now):
        self._accessed[token] = now
        self._used.move_to_end(token)

    def _scan(self):
        """Read the list of items (lock held): at start, and at most every
        ``rescan_seconds`` at an upload. Items another server stored are counted (their
        files read once), items another server removed are forgotten."""
        self._scanned = self.clock()
        listed = set(self._files.ids())
        for token in [t for t in self._used if t not in listed]:
            self._forget(token)
        for token in [t for t in self._expired if t not in listed]:
            del self._expired[token]
        found = listed.difference(self._used, self._expired)
        for token in found:
            self._known(token, reorder=False)
        if found:
            self._reorder()
            self._expired = OrderedDict(sorted(self._expired.items(), key=lambda kv: kv[1]))
        self._expire_due()
        self._evict(keep=None)

    def _forget_all(self):
        self._holder.clear()
        self._holding.clear()
        self._opened.clear()
        self._by_digest.clear()
        self._digest_of.clear()
        self._used.clear()
        self._created.clear()
        self._accessed.clear()
        self._expired.clear()
        self._disk = 0

    def _expired_error(self):
        days = self.ttl_seconds / 86400
        return SharedDataMissing(
            "expired", f"This link's data has expired (links keep data for {days:g} days)."
        )

    def _forget(self, token):
        """Take an item out of the index, leaving its files (lock held)."""
        disk = self._used.get(token, 0)
        holder = self._holder.pop(token, None)
        if holder is not None:
            held = self._holding[holder]
            held[0] -= disk
            held[1] -= 1
            if held[1] <= 0:
                del self._holding[holder]
        self._opened.discard(token)
        self._disk -= self._used.pop(token, 0)
        self._created.pop(token, None)
        self._accessed.pop(token, None)
        digest = self._digest_of.pop(token, None)
        if digest is not None and self._by_digest.get(digest) == token:
            del self._by_digest[digest]

    def _drop(self, token):
        """Remove an item's files and its index entries (lock held)."""
        self._forget(token)
        self._files.remove(token)

    def _add_owner(self, token, owner_key) -> bool:
        """Add an owner to a stored item (lock held); False when it is gone or expired."""
        info = self._info(token)
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
            self._files.write(token, ITEM, json.dumps(info).encode())
        except OSError:
            return False
        return True

    def _expire(self, token):
        """Replace an item by a small note that it expired (lock held)."""
        self._drop(token)
        now = self.clock()
        try:
            self._files.note(token, json.dumps({"expired_at": now}).encode())
        except OSError:
            return
        self._expired[token] = now
        while len(self._expired) > self.max_items:  # the notes are bounded too
            old, _ = self._expired.popitem(last=False)
            self._files.remove(old)

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
            self._files.remove(token)

    def _claim(self, person, token, owner_key) -> None:
        """Count a stored item for ``person`` (lock held); past ``max_per_person``, their
        oldest claim is given up (the item goes with its last claim)."""
        if person is None:
            return
        claims = self._people.setdefault(str(person), [])
        claims[:] = [c for c in claims if c[0] in self._used]  # gone: expired, removed
        claims.append((token, _key_hash(owner_key)))
        while self.max_per_person is not None and len(claims) > self.max_per_person:
            self._give_up(*claims.pop(0))

    def _give_up(self, token, owner_hash) -> None:
        """Remove one owner's claim on an item (lock held), the item with its last claim."""
        info = self._info(token)
        if info is None or "parts" not in info:
            self._forget(token)
            return
        left = [h for h in _owners(info) if not hmac.compare_digest(h, owner_hash)]
        if left:
            info.pop("owner", None)
            info["owners"] = left
            try:
                self._files.write(token, ITEM, json.dumps(info).encode())
            except OSError:
                pass
        else:
            self._drop(token)

    def _over(self) -> bool:
        return self._disk > self.max_total_bytes or len(self._used) > self.max_items

    def _evict(self, keep, person=None) -> None:
        """Items out until the disk and count caps hold (lock held): the uploader's own
        oldest first, then (``evict="lru"``) the least recently used of others', or
        (``"fair"``) the items of whoever is furthest over their share
        (:meth:`_over_share`); an upload ``keep`` that cannot be made room for that way is
        removed and refused with :class:`StoreFull`."""
        self._expire_due()
        if not self._over():
            return
        if person is not None:
            for token, owner_hash in list(self._people.get(str(person), [])):
                if not self._over():
                    return
                if token != keep and token in self._used:
                    self._people[str(person)].remove((token, owner_hash))
                    self._give_up(token, owner_hash)
        while self._over():
            token = self._over_share(keep) if self.evict == "fair" else self._least_used(keep)
            if token is None:
                break
            self._drop(token)
        if keep is not None and self._over():
            holders = len(self._holding)
            self._drop(keep)
            raise StoreFull(
                "The server's store of shared links is full, and every other person keeping "
                f"links there keeps no more than their fair share (1/{holders} of it); this "
                "upload would take more than yours, so it has no link (links expire after "
                f"{self.ttl_seconds / 86400:g} days)."
            )

    def _least_used(self, keep):
        """The least recently used item other than ``keep`` (lock held), or None."""
        return next((token for token in self._used if token != keep), None)

    def _use(self, holder) -> float:
        """A holder's part of the store: the larger of its disk over the disk cap and its
        items over the count cap (lock held)."""
        disk, items = self._holding[holder]
        return max(disk / max(self.max_total_bytes, 1), items / max(self.max_items, 1))

    def _over_share(self, keep):
        """The next item to go by fair shares (lock held), or None: of the holder furthest
        over its share (the cap over the number of holders), its oldest unopened item, else
        its least recently used one; between holders as far over, an unopened item before an
        opened one, the older (the less recently used) first; never ``keep``."""
        share = 1.0 / max(len(self._holding), 1)
        over = {h for h in self._holding if self._use(h) > share}
        unopened, used = {}, {}  # holder -> (position, its first such item)
        for i, token in enumerate(self._created):  # oldest first
            holder = self._holder.get(token, "")
            if holder in over and token != keep and token not in self._opened:
                unopened.setdefault(holder, (i, token))
        for i, token in enumerate(self._used):  # least recently used first
            holder = self._holder.get(token, "")
            if holder in over and token != keep:
                used.setdefault(holder, (i, token))
        ranked = [
            (self._use(h), 1, -unopened[h][0], unopened[h][1])
            if h in unopened
            else (self._use(h), 0, -used[h][0], used[h][1])
            for h in used
        ]
        return max(ranked)[3] if ranked else None


def _folder(root):
    """The storage behind ``root``: a local folder for a path or a ``file://`` URL, fsspec
    for any other URL."""
    text = os.fspath(root)
    if "://" not in text:
        return _LocalFolder(text)
    if text.startswith("file://"):
        return _LocalFolder(text[len("file://") :])
    return _FsspecFolder(text)


class _LocalFolder:
    """The store's files in a folder of this machine (the default): made safely, written to a
    temporary folder and renamed (a reader never sees half an item), disk counted in blocks."""

    def __init__(self, root):
        self.root = Path(root)

    def __str__(self):
        return str(self.root)

    def ensure(self):
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

    def lost(self) -> bool:
        """The folder is gone (or replaced by a link) while the server runs."""
        return not self.root.is_dir() or self.root.is_symlink()

    def ids(self) -> list[str]:
        return [p.name for p in self.root.iterdir() if is_share_id(p.name) and not p.is_symlink()]

    def read(self, token, name) -> bytes:
        return (self.root / token / name).read_bytes()

    def write(self, token, name, data: bytes):
        (self.root / token / name).write_bytes(data)

    def stage(self, token, files: dict):
        """Write an item's files where no reader looks; :meth:`publish` shows them."""
        tmp = Path(tempfile.mkdtemp(prefix=f".incoming-{token}-", dir=self.root))
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        return tmp

    def publish(self, staged, token, info: bytes) -> int:
        """Make a staged item visible under ``token`` at once; the disk it takes."""
        (staged / ITEM).write_bytes(info)
        disk = _disk_bytes(staged)
        os.rename(staged, self.root / token)
        return disk

    def discard(self, staged):
        if staged is not None and staged.exists():
            shutil.rmtree(staged, ignore_errors=True)

    def note(self, token, info: bytes):
        """A small item holding only ``info`` (the note left where an item expired)."""
        (self.root / token).mkdir(mode=0o700)
        self.write(token, ITEM, info)

    def remove(self, token):
        shutil.rmtree(self.root / token, ignore_errors=True)

    def disk(self, token) -> int:
        return _disk_bytes(self.root / token)


class _FsspecFolder:
    """The store's files under an fsspec URL (``s3://bucket/links``, ``gcs://…``,
    ``memory://…``): an item's parts are written first and its ``item.json`` last, so a
    reader (another replica too) sees an item only once it is whole; disk is counted in bytes.
    Access control is the storage's: give the bucket or share to the dashboard's account only.
    """

    def __init__(self, url):
        try:
            import fsspec

            self.fs, self.root = fsspec.core.url_to_fs(url)
        except (ImportError, ValueError) as exc:  # e.g. s3:// without s3fs installed
            raise OSError(f"The share store {url!r} cannot be opened: {exc}") from exc
        self.url = url
        self.root = self.root.rstrip("/")

    def __str__(self):
        return self.url

    def _path(self, *names):
        return "/".join((self.root, *names))

    def ensure(self):
        self.fs.makedirs(self.root, exist_ok=True)

    def lost(self) -> bool:
        return False  # an object store has no folder to lose; paths are made as written

    def ids(self) -> list[str]:
        self.fs.invalidate_cache(self.root)
        try:
            listed = self.fs.ls(self.root, detail=False)
        except FileNotFoundError:
            return []
        return [
            name for name in (p.rstrip("/").rsplit("/", 1)[-1] for p in listed) if is_share_id(name)
        ]

    def read(self, token, name) -> bytes:
        return self.fs.cat_file(self._path(token, name))

    def write(self, token, name, data: bytes):
        self.fs.pipe_file(self._path(token, name), data)

    def stage(self, token, files: dict):
        for name, data in files.items():
            self.write(token, name, data)
        return token

    def publish(self, staged, token, info: bytes) -> int:
        self.write(token, ITEM, info)
        return self.disk(token)

    def discard(self, staged):
        if staged is not None:
            self.remove(staged)

    def note(self, token, info: bytes):
        self.write(token, ITEM, info)

    def remove(self, token):
        try:
            self.fs.rm(self._path(token), recursive=True)
        except FileNotFoundError:
            pass

    def disk(self, token) -> int:
        try:
            return int(self.fs.du(self._path(token)))
        except FileNotFoundError:
            return 0


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
