#!/usr/bin/env bash
# ParaView opens a run through postprocess/animate.py's XDMF: a small d = 3 run, its XDMF written with --xdmf-only,
# the two files moved to another directory together (the XDMF names the run file relative to itself), then
# pvpython (tests/cli/paraview_frame.py) reads it with the "XDMF Reader": one time step per snapshot at
# tokens/time, N points, the last step's points equal to tokens/X[-1]; it renders that step to a PNG, which must
# not be blank. Skipped (77) without pvpython, or when the rendering fails with neither a display nor Xvfb (the data
# checks have passed by then).
source "$(dirname "$0")/common.sh"
if ! command -v pvpython > /dev/null; then
  echo "SKIP: pvpython is not on PATH (Debian: apt-get install python3-paraview)"
  exit 77
fi
run 1 transformer "$SRC/input/default.ini" --model.L=8 --model.d=3 --model.N=16 --diagnostics.snapshot_every=2 \
  --run.progress_interval=0 --run.output=small.h5 > run.log || fail "run: $(tail -n 3 run.log)"
"$PYTHON" "$SRC/postprocess/animate.py" small.h5 --xdmf-only > animate.out || fail "animate.py: $(cat animate.out)"
[ "$(cat animate.out)" = small.xdmf ] || fail "animate.py --xdmf-only printed '$(cat animate.out)', not small.xdmf"
[ ! -e small.mp4 ] && [ ! -e small.gif ] || fail "animate.py --xdmf-only wrote a movie"
mkdir moved && mv small.h5 small.xdmf moved/
"$PYTHON" -c "
import h5py, numpy as np
tokens = h5py.File('moved/small.h5', 'r')['tokens']
assert tokens['X'].shape == (5, 16, 3), tokens['X'].shape  # layers 0, 2, 4, 6, 8
np.save('last.npy', tokens['X'][-1])
np.save('time.npy', tokens['time'][()])" || fail "the run's snapshots"

# ParaView's --force-offscreen-rendering renders without a window where ParaView is built for it (EGL, OSMesa);
# Debian's renders through X only, so without a display it gets a private Xvfb. -noreset: an X server resets when
# its last client leaves, and a connection made meanwhile fails (pvpython opens several, one after the other).
# Displays from 100 up: every MPI process of the tests beside this one may open :0 to :9 (hwloc's GL plugin looks
# for GPUs there) and dies with "X connection to :0 broken" when such a server goes away under it.
# The display number comes from this shell's PID (another one when it is taken), so that tests side by side do
# not race for the first free number (xvfb-run -a's choice is not race-free, as its manual says); -displayfd
# says when the server is ready.
start_xvfb() {
  local n
  for n in $((100 + $$ % 20000)) $((20100 + RANDOM % 20000)) $((40100 + RANDOM % 20000)); do
    rm -f display.txt
    Xvfb ":$n" -displayfd 3 -screen 0 640x480x24 -nolisten tcp -noreset 3> display.txt 2> xvfb.log &
    xvfb=$!
    for _ in $(seq 200); do [ -s display.txt ] || ! kill -0 "$xvfb" 2> /dev/null && break; sleep 0.05; done
    if [ -s display.txt ] && kill -0 "$xvfb" 2> /dev/null; then
      export DISPLAY=":$n"
      return 0
    fi
  done
  fail "Xvfb did not start: $(tail -n 3 xvfb.log)"
}
if [ -z "${DISPLAY:-}" ] && command -v Xvfb > /dev/null; then
  trap '[ -z "${xvfb:-}" ] || kill "$xvfb" 2> /dev/null || true' EXIT
  start_xvfb
fi
rc=0
timeout 120 pvpython --force-offscreen-rendering "$SRC/tests/cli/paraview_frame.py" moved/small.xdmf last.npy time.npy \
  frame.png > pv.log 2>&1 || rc=$?
said() { grep -v '^ *[0-9]* *0x' pv.log | tail -n 5; }  # pv.log without ParaView's stack trace
grep -q "^data checks passed" pv.log || fail "ParaView's reading of the XDMF (exit status $rc): $(said)"
if [ "$rc" != 0 ] && [ -z "${DISPLAY:-}" ]; then
  echo "SKIP: $(grep '^data checks passed' pv.log); the rendering failed (exit status $rc) without a display and" \
       "without Xvfb (Debian's ParaView renders through X only: apt-get install xvfb)"
  exit 77
fi
[ "$rc" = 0 ] || fail "pvpython exit status $rc: $(said)"
"$PYTHON" -c "
import matplotlib.image as mpimg, numpy as np
img = mpimg.imread('frame.png')[..., :3]
assert img.shape[:2] == (400, 400), img.shape
# Pixels unlike the background (the corner's colour): the 16 points, drawn 12 pixels wide.
drawn = int((np.abs(img - img[0, 0]).max(axis=2) > 0.1).sum())
assert drawn > 16 * 20, f'{drawn} pixels differ from the background'
print(f'frame.png: {drawn} pixels drawn')" || fail "frame.png is blank"
grep "^data checks passed" pv.log
echo "paraview: all checks passed"
