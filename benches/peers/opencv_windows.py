"""OpenCV's side of benches/windows.rs: cv2.blur (border reflect-101, its default) and
cv2.erode (a square kernel, its default border) at 3x3 to 63x63 on a 3840x2160 u8 image, the
median of 20 calls each after 3 warm-up calls. One run; prints a Markdown table.

    python3 benches/peers/opencv_windows.py
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


def main():
    h, w = 2160, 3840
    i, j = np.mgrid[0:h, 0:w]
    src = ((i * 7 + j * 13 + (i * j) % 17) % 256).astype(np.uint8)
    print(f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads")
    print("| window | cv2.blur (ms) | cv2.erode (ms) |")
    print("|---:|---:|---:|")
    for n in [3, 7, 15, 31, 63]:
        k = np.ones((n, n), np.uint8)
        b = median_ms(lambda: cv2.blur(src, (n, n), borderType=cv2.BORDER_REFLECT_101))
        e = median_ms(lambda: cv2.erode(src, k))
        print(f"| {n}x{n} | {b:.2f} | {e:.2f} |")
    g = median_ms(lambda: cv2.GaussianBlur(src, (5, 5), 0, borderType=cv2.BORDER_REFLECT_101))
    print(f"cv2.GaussianBlur 5x5 (reflect-101): {g:.2f} ms")


if __name__ == "__main__":
    main()
