"""The open ECP5 FPGA flow (`lsmc fpga`, docs/boards.md, *Open ECP5 flow*): `tools` (the device, the
yowasp wrappers, one flow step, nextpnr options), `timing` (nextpnr's reports read), `flow` (the designs'
flows), `results` (results/fpga.*), `resources` and `blocks` (yosys' estimates per board and per block),
`cli` (the command)."""
