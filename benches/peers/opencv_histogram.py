"""OpenCV's side of benches/histogram.rs: cv2.calcHist (256 bins), cv2.integral (CV_32S),
cv2.integral2 (sum in CV_32S, squared sum in CV_32F), cv2.equalizeHist and cv2.threshold(.., THRESH_OTSU) on the
same 3840x2160 u8 image, the median of 20 calls each after 3 warm-up calls; with OpenCV's
threads as it starts (cv2.getNumThreads()), and its UMat (OpenCL) calls where cv2.ocl has a
device. One run; prints a Markdown table.

    python3 benches/peers/opencv_histogram.py
"""
import statistics
import time

import cv2
import numpy as np


def median_ms(f, runs=20):
    for _ in range(3):
        f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def calls(src):
    return {
        "calcHist": lambda: cv2.calcHist([src], [0], None, [256], [0, 256]),
        "integral": lambda: cv2.integral(src, sdepth=cv2.CV_32S),
        "integral2": lambda: cv2.integral2(src, sdepth=cv2.CV_32S, sqdepth=cv2.CV_32F),
        "equalizeHist": lambda: cv2.equalizeHist(src),
        "threshold OTSU": lambda: cv2.threshold(src, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU),
    }


def main():
    h, w = 2160, 3840
    i, j = np.mgrid[0:h, 0:w]
    src = ((i * 7 + j * 13 + (i * j) % 17) % 256).astype(np.uint8)
    print(f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads")
    cv2.ocl.setUseOpenCL(False)
    cpu = {k: median_ms(f) for k, f in calls(src).items()}
    umat = {}
    if cv2.ocl.haveOpenCL():
        cv2.ocl.setUseOpenCL(True)
        dev = cv2.ocl.Device.getDefault()
        print(f"UMat on {dev.name() or 'no device'}")
        u = cv2.UMat(src)
        for k, f in calls(u).items():
            # A UMat call returns before its kernels finish: wait on the result.
            umat[k] = median_ms(lambda f=f: cv2.UMat.get(r) if isinstance(r := f(), cv2.UMat) else r)
    print("| function | OpenCV CPU (ms) | OpenCV UMat (ms) |")
    print("|---|---:|---:|")
    for k in cpu:
        um = f"{umat[k]:.2f}" if k in umat else "-"
        print(f"| {k} | {cpu[k]:.2f} | {um} |")


if __name__ == "__main__":
    main()
