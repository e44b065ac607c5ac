"""The C host in Python through ctypes: plays MOVIE as the main stream, serves the session to the unit
command (which gets --socket PATH appended; it reads "duck" and "leave" on stdin, as remote-unit does)
and exits 1 unless the movie came back after the unit's duck.

    LD_LIBRARY_PATH=<prefix>/lib python3 pyhost.py [--engine offline|pipewire] MOVIE UNIT_COMMAND...
"""
import ctypes, math, os, subprocess, sys, time

lib = ctypes.CDLL("libsharedsession.so.0")
lib.sharedsession_last_error_message.restype = ctypes.c_char_p
lib.sharedsession_version.restype = ctypes.c_char_p
H, F = ctypes.c_uint64, ctypes.c_float
OFFLINE, PIPEWIRE, GENERIC = 0, 1, 0


def check(status, what):
    if status != 0:
        sys.exit(f"pyhost: {what}: {lib.sharedsession_last_error_message().decode()}")


args = sys.argv[1:]
forced = args[1] if args[:1] == ["--engine"] else None
movie_path, unit = (args[2], args[3:]) if forced else (args[0], args[1:])
session = H()
if forced == "offline" or lib.sharedsession_start(PIPEWIRE, b"PyHost", ctypes.byref(session)) != 0:
    if forced == "pipewire":
        check(1, "start")
    if forced is None:
        print(lib.sharedsession_last_error_message().decode(), "\nusing the offline engine")
    check(lib.sharedsession_start(OFFLINE, b"PyHost", ctypes.byref(session)), "start")
engine = ctypes.c_int32()
check(lib.sharedsession_engine_of(session, ctypes.byref(engine)), "engine")
print(f"libsharedsession {lib.sharedsession_version().decode()}, engine: {'offline' if engine.value == OFFLINE else 'PipeWire'}")
lease, movie, server = H(), H(), H()
check(lib.sharedsession_acquire(session, GENERIC, b"player", ctypes.byref(lease)), "acquire")
check(lib.sharedsession_open_main_media(session, movie_path.encode(), ctypes.byref(movie)), "open the movie")
check(lib.sharedsession_set_main_volume(session, F(0.8)), "volume")


def gains():
    volume, duck, gain, ducks = F(), F(), F(), ctypes.c_int32()
    check(lib.sharedsession_gains(session, *(ctypes.byref(v) for v in (volume, duck, gain, ducks))), "gains")
    return volume.value, duck.value, gain.value, ducks.value


def play_second():
    level = ctypes.c_double(math.nan)
    if engine.value == OFFLINE:
        check(lib.sharedsession_render(session, 1000, ctypes.byref(level)), "render")
    else:
        time.sleep(1)
    heard = "" if math.isnan(level.value) else f", movie at {level.value:.2f} dBFS"
    print("  volume %.2f x duck %.2f = main gain %.3f, ducks %d" % gains() + heard)
    return level.value


def wait_for_ducks(count):
    deadline = time.monotonic() + 10
    while gains()[3] != count:
        if time.monotonic() > deadline:
            sys.exit(f"pyhost: waited 10 s for {count} ducks")
        time.sleep(0.01)


before = play_second()
path = f"{os.environ.get('XDG_RUNTIME_DIR', '/tmp')}/sharedsession-pyhost-{os.getpid()}.sock"
check(lib.sharedsession_serve(session, path.encode(), ctypes.byref(server)), "serve")
unit = subprocess.Popen(unit + ["--socket", path], stdin=subprocess.PIPE, text=True)
unit.stdin.write("duck\n"); unit.stdin.flush()
wait_for_ducks(1)
under = play_second()
unit.stdin.write("leave\n"); unit.stdin.close()
unit.wait()
wait_for_ducks(0)
after = play_second()
volume, duck, gain, _ = gains()
restored = unit.returncode == 0 and duck == 1 and gain == volume
if engine.value == OFFLINE:
    print(f"movie: {before:.2f} dBFS, {under:.2f} under the duck, {after:.2f} after")
    restored = restored and under < before - 10 and abs(after - before) <= 0.1
for handle in (server, movie, lease, session):
    check(lib.sharedsession_release(handle), "release")
sys.exit(0 if restored else "pyhost: the movie did not come back to where it was before the unit's duck")
