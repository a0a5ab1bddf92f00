#!/usr/bin/env python3
"""Opens a page sitesim wrote (the what-if report) in a real headless Chromium and checks it.

    browser-test.py PAGE.html SCREENSHOT.png

Checks: the page loads (a title, the verdict section), the browser's console log holds no
error (SEVERE entry), no resource was requested from anywhere (the page is self-contained:
the Resource Timing list is empty), and every <svg> figure is rendered with a nonzero size.
Saves a full-page screenshot to SCREENSHOT.png and prints its path. Exits non-zero, saying why,
on any failure.

Needs Chromium and its driver (Debian: apt-get install chromium chromium-driver) and Selenium
(pip install selenium). The driver is the system's (CHROMEDRIVER, default /usr/bin/chromedriver)
and the browser too (CHROMIUM, default /usr/bin/chromium): nothing is downloaded.
"""

from __future__ import annotations

import os
import pathlib
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    page = pathlib.Path(sys.argv[1]).resolve()
    shot = pathlib.Path(sys.argv[2]).resolve()
    if not page.is_file():
        print(f"{page}: no such page", file=sys.stderr)
        return 1

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for arg in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root in a container
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,900",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    failures: list[str] = []
    try:
        driver.set_page_load_timeout(60)
        driver.get(page.as_uri())
        state = driver.execute_script("return document.readyState")
        if state != "complete":
            failures.append(f"the page did not finish loading (readyState {state!r})")
        title = driver.title
        if not title.startswith("What if"):
            failures.append(f"unexpected title {title!r}")
        if not driver.find_elements("id", "verdict"):
            failures.append("no verdict section (id=verdict)")

        # console: no errors
        for entry in driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                failures.append(f"console error: {entry.get('message')}")

        # self-contained: nothing fetched besides the page itself
        fetched = driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        if fetched:
            failures.append(f"the page requested other resources: {fetched}")

        # every figure rendered, with a size
        sizes = driver.execute_script(
            "return Array.from(document.querySelectorAll('svg')).map(s => {"
            " const r = s.getBoundingClientRect(); return [r.width, r.height]; })"
        )
        if not sizes:
            failures.append("no <svg> figure on the page")
        for i, (width, height) in enumerate(sizes, start=1):
            if not (width > 0 and height > 0):
                failures.append(f"figure {i} is not rendered ({width} x {height} px)")
        tables = len(driver.find_elements("tag name", "table"))
        if tables < 3:
            failures.append(f"only {tables} tables")

        # a screenshot of the whole page
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, max(900, min(int(height) + 40, 12000)))
        shot.parent.mkdir(parents=True, exist_ok=True)
        if not driver.save_screenshot(str(shot)):
            failures.append(f"cannot save the screenshot {shot}")
    finally:
        driver.quit()

    print(f"page: {page}")
    print(f"figures: {len(sizes)} ({', '.join(f'{w:.0f}x{h:.0f}' for w, h in sizes)} px)")
    print(f"screenshot: {shot}")
    if failures:
        for failure in failures:
            print(f"FAIL: {failure}", file=sys.stderr)
        return 1
    print("browser test passed: loaded, no console error, no outside resource, every figure rendered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
