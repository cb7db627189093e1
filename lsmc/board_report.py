"""`lsmc board-report --port URL`: Table III from the firmware console of a board or simulator (lsmc.console)."""
from lsmc.console import board_report_main as main

__all__ = ["main"]
