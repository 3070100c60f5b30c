"""Tests of pages._shared.sharing: the server-side store behind shareable data links."""

from __future__ import annotations

import json
import math
import os
import re

import pytest

from pages._shared.sharing import (
    ID_BYTES,
    NotOwner,
    SharedDataMissing,
    StoreLimits,
    UploadStore,
    is_share_id,
)
from sblr.exceptions import DataError


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


def test_round_trip_and_the_id_is_128_random_bits(tmp_path):
    store = UploadStore(tmp_path)
    ids = {
        store.put({"data": b"a,b\n1,%d\n" % i, "xml": b"<labels/>"}, {"name": "x.csv"})[0]
        for i in range(50)
    }
    assert len(ids) == 50  # never repeats
    for token in ids:
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", token) and is_share_id(token)
    assert ID_BYTES * 8 >= 128 and math.ceil(ID_BYTES * 8 / 6) == 22
    parts, meta = store.get(next(iter(ids)))
    assert parts["xml"] == b"<labels/>" and parts["data"].startswith(b"a,b\n1,")
    assert meta == {"name": "x.csv"}


@pytest.mark.parametrize(
    "bad", ["../../etc/passwd", "", "a" * 21, "a" * 23, "abc/def" + "g" * 15, None, 42, "é" * 22]
)
def test_malformed_ids_never_touch_the_file_system(tmp_path, bad):
    store = UploadStore(tmp_path / "store")
    (tmp_path / "passwd").write_text("secret")
    with pytest.raises(SharedDataMissing) as err:
        store.get(bad)
    assert err.value.reason == "unknown"
    assert store.delete(bad, "any key") is False


def test_unknown_id_and_deleted_item(tmp_path):
    store = UploadStore(tmp_path)
    token, owner_key = store.put({"data": b"1"}, {})
    assert store.delete(token, owner_key) is True
    with pytest.raises(SharedDataMissing, match="not on the server") as err:
        store.get(token)
    assert err.value.reason == "unknown"


def test_item_size_cap(tmp_path):
    store = UploadStore(tmp_path, StoreLimits(max_item_mb=1))
    with pytest.raises(DataError, match="at most 1 MB"):
        store.put({"data": b"x" * (2**20 + 1)}, {})
    with pytest.raises(DataError, match="'data' part"):
        store.put({"other": b"x"}, {})


def test_expiry_after_the_ttl_whether_used_or_not(tmp_path):
    clock = Clock()
    store = UploadStore(tmp_path, StoreLimits(ttl_seconds=100), clock=clock)
    token, _ = store.put({"data": b"1"}, {})
    clock.now += 60
    store.get(token)  # used: does not extend its life
    clock.now += 41
    with pytest.raises(SharedDataMissing, match="expired") as err:
        store.get(token)
    assert err.value.reason == "expired"
    # every later visitor (the uploader too) is told the same, also after a restart
    for reader in (store, UploadStore(tmp_path, StoreLimits(ttl_seconds=100), clock=clock)):
        with pytest.raises(SharedDataMissing, match="expired") as err:
            reader.get(token)
        assert err.value.reason == "expired"
    assert not (tmp_path / token / "data").exists()  # the data itself is gone
    clock.now += 201  # the note goes too, after twice the ttl
    with pytest.raises(SharedDataMissing) as err:
        store.get(token)
    assert err.value.reason == "unknown" and not (tmp_path / token).exists()


def test_total_cap_evicts_the_least_recently_used(tmp_path):
    clock = Clock()
    mb = b"x" * 2**20
    # the cap counts disk as the file system does: each item is 1 MiB plus its folder and
    # two small files (a few KiB of blocks)
    store = UploadStore(tmp_path, StoreLimits(max_item_mb=2, max_total_mb=3.1), clock=clock)
    a, _ = store.put({"data": mb}, {"n": "a"})
    clock.now += 1
    b, _ = store.put({"data": mb}, {"n": "b"})
    clock.now += 1
    c, _ = store.put({"data": mb}, {"n": "c"})
    clock.now += 1
    store.get(a)  # a is now the most recently used; b the least
    clock.now += 1
    d, _ = store.put({"data": mb}, {"n": "d"})
    assert store.total_bytes() <= 3.1 * 2**20
    with pytest.raises(SharedDataMissing):
        store.get(b)
    for token in (a, c, d):
        store.get(token)


def test_the_store_folder_is_private_to_the_server_account(tmp_path):
    import stat

    store = UploadStore(tmp_path / "shared")
    store.put({"data": b"1"}, {})
    mode = stat.S_IMODE((tmp_path / "shared").stat().st_mode)
    assert mode & 0o077 == 0, oct(mode)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a folder away needs root"
)
def test_a_store_folder_another_account_made_first_is_refused(tmp_path):
    """Found by an audit: in a shared /tmp another account could make the store's folder
    first (mode 0777), keep it, and list every id, the key to each upload. The store refuses
    a folder it does not own, and the dashboard's default folder is per account."""
    root = tmp_path / "shared"
    root.mkdir(mode=0o777)
    os.chown(root, 65534, 65534)  # nobody's
    with pytest.raises(PermissionError, match="belongs to another account"):
        UploadStore(root)
    assert list(root.iterdir()) == []


def test_the_dashboards_store_is_one_folder_per_account(monkeypatch, tmp_path):
    from pages._shared import data

    monkeypatch.delenv("SBLR_SHARE_DIR", raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    data.share_store.clear()  # a cached resource: the store another test made is not this one
    try:
        assert data.share_store().root == tmp_path / f"sblr-shared-uploads-{os.getuid()}"
    finally:
        data.share_store.clear()  # the next test makes its own again


def test_only_the_owner_key_removes_an_item(tmp_path):
    """A link is a capability to read: whoever has the id may read; only the key that put()
    returned (never in the link) may remove. The store keeps only the key's hash."""
    store = UploadStore(tmp_path)
    token, owner_key = store.put({"data": b"1,2\n"}, {"name": "t.csv"})
    other_token, other_key = store.put({"data": b"3,4\n"}, {"name": "u.csv"})
    assert owner_key != token and len(owner_key) == 22  # 128 random bits too
    for wrong in (token, other_key, "", None, owner_key[:-1], owner_key + "x"):
        assert store.is_owner(token, wrong) is False
        with pytest.raises(NotOwner):
            store.delete(token, wrong)
        assert store.get(token)[0]["data"] == b"1,2\n"  # still there
    assert store.is_owner(token, owner_key)
    assert owner_key not in (tmp_path / token / "item.json").read_text()
    assert store.delete(token, owner_key) is True
    assert store.delete(token, owner_key) is False  # gone
    assert store.get(other_token)[0]["data"] == b"3,4\n"


def test_an_item_without_an_owner_hash_cannot_be_removed_early(tmp_path):
    """Items stored before owner keys existed (no hash) are nobody's to remove: they go
    when they expire or make room."""
    store = UploadStore(tmp_path)
    token, _ = store.put({"data": b"1"}, {})
    info = json.loads((tmp_path / token / "item.json").read_text())
    info.pop("owner", None)
    info.pop("owners", None)
    (tmp_path / token / "item.json").write_text(json.dumps(info))
    assert not store.is_owner(token, "")
    with pytest.raises(NotOwner):
        store.delete(token, "whatever")


def test_expires_at_is_the_creation_time_plus_the_ttl(tmp_path):
    clock = Clock()
    store = UploadStore(tmp_path, StoreLimits(ttl_seconds=100), clock=clock)
    token, _ = store.put({"data": b"1"}, {})
    assert store.expires_at(token) == pytest.approx(clock.now + 100)
    assert store.expires_at("A" * 22) is None


def _du(root):
    """Disk of every file and folder under root, from the file system (st_blocks)."""
    paths = [root, *root.rglob("*")]
    return sum(os.lstat(p).st_blocks * 512 for p in paths) - os.lstat(root).st_blocks * 512


@pytest.mark.slow
def test_the_cap_counts_disk_as_the_file_system_does(tmp_path):
    """1,500 tiny items took 1,369 times their counted bytes on disk; the store now counts
    blocks. Oracle: st_blocks summed over the folder by rglob."""
    store = UploadStore(tmp_path / "s", StoreLimits(max_total_mb=1))
    for i in range(40):
        store.put({"data": b"%d" % i}, {})
    assert store.total_bytes() == _du(tmp_path / "s")
    assert store.total_bytes() >= 40 * 4096  # not the 40-odd bytes uploaded
    store = UploadStore(
        tmp_path / "t", StoreLimits(max_total_mb=0.2)
    )  # 200 KiB: a few dozen tiny items
    for i in range(200):
        store.put({"data": b"%d" % i}, {})
    assert store.total_bytes() <= 0.2 * 2**20 and _du(tmp_path / "t") <= 0.2 * 2**20


def test_an_item_count_cap_evicts_the_least_recently_used(tmp_path):
    clock = Clock()
    store = UploadStore(tmp_path, StoreLimits(max_items=5), clock=clock)
    tokens = []
    for i in range(8):
        clock.now += 1
        tokens.append(store.put({"data": b"%d" % i}, {})[0])
    assert len(store) == 5
    assert sorted(p.name for p in tmp_path.iterdir() if is_share_id(p.name)) == sorted(tokens[3:])


def test_an_upload_does_not_scan_the_store(tmp_path, monkeypatch):
    """Every upload rescanned every item under the lock opening a link takes (~8 s an
    upload at 100,000 items). The index is read once; an upload looks at its own folder."""
    from pathlib import Path

    store = UploadStore(tmp_path / "s")
    for i in range(30):
        store.put({"data": b"%d" % i}, {})
    listed = []
    original = Path.iterdir

    def iterdir(self):
        listed.append(self)
        return original(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    for i in range(30):
        token, _ = store.put({"data": b"more %d" % i}, {})
        store.get(token)
    assert tmp_path / "s" not in listed
    monkeypatch.undo()
    assert len(UploadStore(tmp_path / "s")) == 60  # the index of a new server: one scan


def test_a_symbolic_link_as_the_store_folder_is_refused_and_not_followed(tmp_path):
    """The store's root was followed through a symlink and chmod-ed 0700: another account
    could point it anywhere in a shared temporary folder."""
    import stat

    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o755)
    os.chmod(target, 0o755)
    (tmp_path / "store").symlink_to(target)
    with pytest.raises(PermissionError, match="symbolic link"):
        UploadStore(tmp_path / "store")
    assert stat.S_IMODE(target.stat().st_mode) == 0o755  # not touched through the link
    assert list(target.iterdir()) == []


def test_a_store_folder_removed_while_serving_is_made_again(tmp_path):
    """If the folder disappeared at run time, sharing stayed off until a restart."""
    import shutil

    store = UploadStore(tmp_path / "s")
    old, _ = store.put({"data": b"1"}, {})
    shutil.rmtree(tmp_path / "s")
    token, _ = store.put({"data": b"2"}, {})
    assert store.get(token)[0]["data"] == b"2"
    with pytest.raises(SharedDataMissing):
        store.get(old)
    assert store.total_bytes() == _du(tmp_path / "s")


def test_identical_uploads_are_stored_once_with_one_owner_key_each(tmp_path):
    """Every "Load this file" click stored another copy (one session could evict every
    other link). The same bytes and options are stored once; each uploader gets a key of
    their own, and the data goes with the last claim."""
    store = UploadStore(tmp_path)
    first, key_a = store.put({"data": b"x,y\n1,2\n"}, {"name": "d.csv"})
    disk = store.total_bytes()
    again, key_b = store.put({"data": b"x,y\n1,2\n"}, {"name": "d.csv"})
    assert again == first and key_a != key_b
    assert len(store) == 1 and store.total_bytes() == disk  # no second copy on disk
    other, _ = store.put({"data": b"x,y\n1,2\n"}, {"name": "d.csv", "target": "y"})
    assert other != first and len(store) == 2  # other options: another item
    assert store.is_owner(first, key_a) and store.is_owner(first, key_b)
    assert store.delete(first, key_a) is True
    assert store.get(first)[0]["data"] == b"x,y\n1,2\n"  # still the other owner's link
    assert not store.is_owner(first, key_a)
    assert store.delete(first, key_b) is True
    with pytest.raises(SharedDataMissing):
        store.get(first)
    assert UploadStore(tmp_path).put({"data": b"x,y\n1,2\n"}, {"name": "d.csv"})[0] != first


# ---------------------------------------------------------------- replicas sharing one store
@pytest.fixture(params=["folder", "fsspec"])
def shared_root(request, tmp_path):
    """The root two dashboard replicas share: a folder, or an fsspec URL (fsspec's in-memory
    file system stands for a bucket: the same code path as s3:// or gcs://)."""
    if request.param == "folder":
        yield tmp_path / "links"
        return
    import fsspec

    url = f"memory://sblr-test-{os.urandom(6).hex()}"
    yield url
    fs, path = fsspec.core.url_to_fs(url)
    if fs.exists(path):
        fs.rm(path, recursive=True)


def test_replicas_sharing_a_root_open_each_others_links(shared_root):
    """With sticky sessions, the student who opens the teacher's link may land on another
    replica than the teacher's: that replica must find the item (it was stored after its own
    index was read), honour the teacher's owner key, and see a removal made elsewhere."""
    a, b = UploadStore(shared_root), UploadStore(shared_root)
    token, owner_key = a.put({"data": b"x,y\n1,2\n", "xml": b"<l/>"}, {"name": "t.csv"})
    assert len(b) == 0  # b has not scanned since
    parts, meta = b.get(token)
    assert parts == {"data": b"x,y\n1,2\n", "xml": b"<l/>"} and meta == {"name": "t.csv"}
    assert len(b) == 1 and b.total_bytes() > 0
    assert b.expires_at(token) == a.expires_at(token)
    assert b.is_owner(token, owner_key) and not b.is_owner(token, "a guess")
    with pytest.raises(NotOwner):
        b.delete(token, "a guess")
    assert a.delete(token, owner_key) is True  # removed on the teacher's replica
    with pytest.raises(SharedDataMissing, match="not on the server"):
        b.get(token)
    assert len(b) == 0 and b.total_bytes() == 0  # b forgot it too


def test_replicas_keep_one_set_of_caps(shared_root):
    """Each replica counts the others' items at its next scan: the count cap holds for the
    store, not per replica, and the least recently used item goes first whoever stored it."""
    clock = Clock()
    a = UploadStore(shared_root, StoreLimits(max_items=4, rescan_seconds=10), clock=clock)
    b = UploadStore(shared_root, StoreLimits(max_items=4, rescan_seconds=10), clock=clock)
    tokens = []
    for i, store in enumerate([a, b, a, b]):
        clock.now += 1
        tokens.append(store.put({"data": b"%d" % i}, {})[0])
    clock.now += 1
    a.get(tokens[0])  # a's first item is now the most recently used of all
    clock.now += 20  # past the rescan interval
    tokens.append(b.put({"data": b"new"}, {})[0])
    assert len(b) == 4
    fresh = UploadStore(shared_root, StoreLimits(max_items=4), clock=clock)
    assert len(fresh) == 4
    with pytest.raises(SharedDataMissing):
        fresh.get(tokens[1])  # the least recently used (b's first), not a's used one
    for token in (tokens[0], *tokens[2:]):
        fresh.get(token)


def test_a_replica_sees_an_item_another_expired(shared_root):
    clock = Clock()
    a = UploadStore(shared_root, StoreLimits(ttl_seconds=100), clock=clock)
    b = UploadStore(shared_root, StoreLimits(ttl_seconds=100), clock=clock)
    token, _ = a.put({"data": b"1"}, {})
    clock.now += 101
    with pytest.raises(SharedDataMissing) as err:
        a.get(token)
    assert err.value.reason == "expired"
    with pytest.raises(SharedDataMissing) as err:
        b.get(token)  # b never saw the item: the note left behind says "expired", not "unknown"
    assert err.value.reason == "expired"


def test_a_replica_that_opened_an_item_sees_another_expire_it(shared_root):
    """b opened the link before a's clock passed its time and a expired it: b, whose index
    still holds the item, reads the note and says "expired" (it said "unknown", as if the
    data had been removed), and forgets the item's size."""
    clock = Clock()
    a = UploadStore(shared_root, StoreLimits(ttl_seconds=100), clock=clock)
    b = UploadStore(shared_root, StoreLimits(ttl_seconds=100), clock=lambda: 0.0)
    token, _ = a.put({"data": b"1"}, {})
    b.get(token)
    assert len(b) == 1
    clock.now += 101
    with pytest.raises(SharedDataMissing) as err:
        a.get(token)
    assert err.value.reason == "expired"
    for _ in range(2):  # and again: the note is known from then on
        with pytest.raises(SharedDataMissing) as err:
            b.get(token)
        assert err.value.reason == "expired", str(err.value)
    assert len(b) == 0 and b.total_bytes() == 0


def test_a_new_replica_reads_the_use_order_of_the_store(shared_root):
    clock = Clock()
    a = UploadStore(shared_root, clock=clock)
    tokens = []
    for i in range(5):
        clock.now += 1
        tokens.append(a.put({"data": b"%d" % i}, {})[0])
    clock.now += 1
    a.get(tokens[0])
    b = UploadStore(shared_root, StoreLimits(max_items=10), clock=clock)
    assert list(b._used) == tokens[1:] + tokens[:1]  # least recently used first
    assert list(b._created) == tokens  # oldest first


def test_a_url_is_a_store_and_a_file_url_is_a_local_folder(tmp_path):
    from pages._shared.sharing import _FsspecFolder, _LocalFolder

    assert isinstance(UploadStore(f"file://{tmp_path / 'f'}")._files, _LocalFolder)
    assert (tmp_path / "f").is_dir()
    assert isinstance(UploadStore("memory://sblr-test-url")._files, _FsspecFolder)
    with pytest.raises(OSError, match="cannot be opened"):
        UploadStore("nosuchprotocol://bucket/links")


def test_one_person_keeps_at_most_their_quota_their_oldest_going_first(tmp_path):
    """Issue #35: the quota lived in the session, so a reload (a new session) could store
    three more. Counted per person, their oldest claim goes; the same bytes another person
    also stored stay for that person's link."""
    clock = Clock()
    store = UploadStore(tmp_path, StoreLimits(max_per_person=2), clock=clock)
    theirs, _ = store.put({"data": b"shared bytes"}, {}, person="teacher")
    mine = []
    for data in [b"shared bytes", b"one", b"two"]:
        clock.now += 1
        mine.append(store.put({"data": data}, {}, person="student")[0])
    assert mine[0] == theirs  # identical bytes: one item, two claims
    assert store.expires_at(theirs) is not None  # the student gave up only their claim
    for token in mine[1:]:
        store.get(token)
    clock.now += 1
    store.put({"data": b"three"}, {}, person="student")
    with pytest.raises(SharedDataMissing):
        store.get(mine[1])  # the student's oldest own item went
    store.get(theirs)


def _ids(root):
    return sorted(p.name for p in root.iterdir() if is_share_id(p.name))


def _alive(store, tokens):
    return [t for t in tokens if store.expires_at(t) is not None]


def test_a_full_store_still_takes_a_newcomers_link(tmp_path, monkeypatch):
    """Issue #44 item 7: the dashboard's full store refused every newcomer's link until links
    expired (up to 7 days). Now what is over its share gives way: here the person holding
    three of the four links loses their oldest unopened one."""
    import streamlit as st

    from pages._shared import data

    monkeypatch.setenv("SBLR_SHARE_DIR", str(tmp_path))
    monkeypatch.setattr(data, "SHARE_MAX_ITEMS", 4)
    st.cache_resource.clear()  # the dashboard's store, made again with that cap
    try:
        store = data.share_store()
        mine = [store.put({"data": b"a%d" % i}, {}, person="a")[0] for i in range(3)]
        theirs, _ = store.put({"data": b"b"}, {}, person="b")
        store.get(mine[0])  # opened: a link somebody uses
        newcomer, _ = store.put({"data": b"c"}, {}, person="c")
        assert store.expires_at(newcomer) is not None
        assert _alive(store, [*mine, theirs]) == [mine[0], mine[2], theirs]
    finally:
        st.cache_resource.clear()


def test_a_cookie_dropping_flood_cannot_evict_a_link_held_within_its_share(tmp_path):
    """A new cookie is a new person, not a new holder: one address's uploads count together
    (the dashboard passes the address as ``holder``). Thirty fresh cookies of one address,
    each opening its own link, take their own oldest links, never the teacher's."""
    clock = Clock()
    mb = b"x" * 2**20
    store = UploadStore(
        tmp_path, StoreLimits(max_item_mb=2, max_total_mb=3.1, evict="fair"), clock=clock
    )
    lesson, _ = store.put({"data": mb + b"lesson"}, {}, person="teacher", holder="school")
    flood = []
    for i in range(30):
        clock.now += 1
        token, _ = store.put({"data": mb + b"%d" % i}, {}, person=f"cookie{i}", holder="attic")
        store.get(token)
        flood.append(token)
    assert store.expires_at(lesson) is not None
    assert _alive(store, flood) == flood[-2:]  # every one of them got its link
    assert store.total_bytes() <= 3.1 * 2**20


def test_what_goes_is_the_largest_holders_oldest_unopened_then_least_recently_used(tmp_path):
    """The policy, item by item (count cap 5): at an upload past a cap, the holder furthest
    over its share (the cap over the number of holders) loses its oldest unopened link; when
    it has none left, its least recently used one."""
    clock = Clock()
    store = UploadStore(tmp_path, StoreLimits(max_items=5, evict="fair"), clock=clock)

    def put(data, holder):
        clock.now += 1
        return store.put({"data": data}, {}, person=data.decode(), holder=holder)[0]

    a1, a2, a3, b1, c1 = (put(d, h) for d, h in [(b"a1", "A"), (b"a2", "A"), (b"a3", "A"),
                                                  (b"b1", "B"), (b"c1", "C")])  # fmt: skip
    for token in (a3, a1):  # opened, a1 the most recently
        clock.now += 1
        store.get(token)
    d1 = put(b"d1", "D")  # A holds 3/5, its share 1/4: its oldest unopened, a2
    assert _alive(store, [a1, a2, a3, b1, c1, d1]) == [a1, a3, b1, c1, d1]
    e1 = put(b"e1", "E")  # A holds 2/5 > 1/5, none unopened: its least recently used, a3
    assert _alive(store, [a1, a3, b1, c1, d1, e1]) == [a1, b1, c1, d1, e1]
    f1 = put(b"f1", "F")  # each holds 1/5 > 1/6: the oldest unopened of them all, b1
    assert _alive(store, [a1, b1, c1, d1, e1, f1]) == [a1, c1, d1, e1, f1]


def test_an_upload_past_its_share_while_everyone_holds_within_theirs_is_refused(tmp_path):
    """Refused only when nobody else is over their share: six holders of 0.4 MB in a 3.1 MB
    store (each within 1/7), a seventh's 1 MB upload has no link and removes nothing; the
    uploader's own oldest go first, as before."""
    from pages._shared.sharing import StoreFull

    clock = Clock()
    store = UploadStore(
        tmp_path, StoreLimits(max_item_mb=2, max_total_mb=3.1, evict="fair"), clock=clock
    )
    for h in range(6):
        clock.now += 1
        store.put({"data": b"x" * 400_000 + b"%d" % h}, {}, person=f"p{h}", holder=f"h{h}")
    before = _ids(tmp_path)
    with pytest.raises(StoreFull, match="fair share"):
        store.put({"data": b"n" * 2**20}, {}, person="newcomer", holder="h6")
    assert _ids(tmp_path) == before
    # the same upload by a holder that is over its share with older items: its own go
    clock.now += 1
    again, _ = store.put({"data": b"x" * 700_000}, {}, person="p0", holder="h0")
    clock.now += 1
    store.put({"data": b"y" * 700_000}, {}, person="p0", holder="h0")
    assert store.expires_at(again) is None and len(_ids(tmp_path)) == 6
    assert store.total_bytes() <= 3.1 * 2**20


def test_the_library_default_still_evicts_the_least_recently_used(tmp_path):
    """``evict="lru"`` (a store of one user's links, the library's default): anybody's least
    recently used goes, the uploader's own oldest first."""
    clock = Clock()
    mb = b"x" * 2**20
    store = UploadStore(tmp_path, StoreLimits(max_item_mb=2, max_total_mb=3.1), clock=clock)
    teacher, _ = store.put({"data": mb + b"t"}, {}, person="teacher")
    clock.now += 1
    a, _ = store.put({"data": mb + b"a"}, {}, person="student")
    clock.now += 1
    b, _ = store.put({"data": mb + b"b"}, {}, person="student")
    clock.now += 1
    c, _ = store.put({"data": mb + b"c"}, {}, person="student")  # over: the student's oldest
    assert _alive(store, [teacher, a, b, c]) == [teacher, b, c]
    clock.now += 1
    store.put({"data": mb + b"n"}, {}, person="newcomer")  # then the least recently used
    assert _alive(store, [teacher, b, c]) == [b, c]
    with pytest.raises(ValueError, match="evict"):
        UploadStore(tmp_path, StoreLimits(evict="never"))
