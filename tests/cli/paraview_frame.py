"""Run under pvpython (tests/cli/paraview.sh): open a run's XDMF (postprocess/animate.py --xdmf-only) with ParaView's
"XDMF Reader", check its time steps against the run's tokens/time, the last step's points against tokens/X[-1] and
the token index attribute, then render the last step to a PNG.

    pvpython --force-offscreen-rendering paraview_frame.py RUN.xdmf LAST.npy TIME.npy OUT.png

LAST.npy: tokens/X[-1] [N, d]; TIME.npy: tokens/time (numpy files: this Python may lack h5py). Exit status 1 with
a message on a disagreement; "data checks passed" is printed before the rendering starts.
"""

import sys

import numpy as np
from paraview import servermanager
from paraview.simple import ColorBy, CreateView, Render, ResetCamera, SaveScreenshot, Show, XDMFReader
from vtk.util.numpy_support import vtk_to_numpy

xdmf, last_file, time_file, png = sys.argv[1:5]
last, times = np.load(last_file), np.load(time_file)
n, d = last.shape

reader = XDMFReader(FileNames=[xdmf])
reader.UpdatePipelineInformation()
steps = np.array(reader.TimestepValues, dtype=float)
if steps.shape != times.shape or not np.allclose(steps, times, rtol=1e-12, atol=0):
    sys.exit(f"time steps {steps.tolist()}, tokens/time {times.tolist()}")

reader.UpdatePipeline(steps[-1])
data = servermanager.Fetch(reader)
if data.IsA("vtkMultiBlockDataSet"):
    data = data.GetBlock(0)
if data.GetNumberOfPoints() != n:
    sys.exit(f"{data.GetNumberOfPoints()} points at the last step, N = {n}")
points = vtk_to_numpy(data.GetPoints().GetData())
# ParaView's points have three coordinates: XY geometry (d = 2) has z = 0; d > 3 shows x1, x2, x3.
expected = np.zeros((n, 3))
expected[:, :min(d, 3)] = last[:, :3]
error = float(np.abs(points - expected).max())
if error > 1e-6:
    sys.exit(f"the last step's points differ from tokens/X[-1] by up to {error:.3g}")
token = data.GetPointData().GetArray("token")
if token is None or not np.array_equal(vtk_to_numpy(token), np.arange(n)):
    sys.exit("no point attribute 'token' holding 0 .. N-1")
print(f"data checks passed: {len(steps)} time steps, {n} points, the last step equal to tokens/X[-1] "
      f"(up to {error:.2g})", flush=True)

view = CreateView("RenderView")
view.ViewSize = [400, 400]
view.ViewTime = steps[-1]
view.OrientationAxesVisibility = 0
display = Show(reader, view)
display.SetRepresentationType("Points")
display.PointSize = 12
display.RenderPointsAsSpheres = 1
ColorBy(display, ("POINTS", "token"))
ResetCamera(view)
Render(view)
SaveScreenshot(png, view, ImageResolution=[400, 400])
print(f"rendered {png}")
