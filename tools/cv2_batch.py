# OpenCV batch: read, rotate 90, write, over a pool of 2 threads (cv2 releases the GIL).
import cv2, os, sys
from concurrent.futures import ThreadPoolExecutor
src, dst, ext = sys.argv[1], sys.argv[2], sys.argv[3]
cv2.setNumThreads(1)
def one(name):
    im = cv2.imread(os.path.join(src, name), cv2.IMREAD_UNCHANGED)
    out = cv2.rotate(im, cv2.ROTATE_90_CLOCKWISE)
    params = [cv2.IMWRITE_JPEG_QUALITY, 90] if ext == 'jpg' else []
    cv2.imwrite(os.path.join(dst, os.path.splitext(name)[0] + '.' + ext), out, params)
with ThreadPoolExecutor(2) as ex:
    list(ex.map(one, sorted(os.listdir(src))))
