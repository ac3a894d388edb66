-- SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
--
-- Wireshark / tshark dissector for MetaRoCE v1 (Documentation/metaroce/spec.md).
-- Every header and field of spec section 5 is decoded under the name the
-- spec gives it; the CRC32C trailer (spec 4.5) is verified.
--
--   tshark -X lua_script:tools/wireshark/metaroce.lua -r cap.pcap -V
--   tshark -X lua_script:tools/wireshark/metaroce.lua -r cap.pcap \
--          -T fields -e metaroce.type -e metaroce.psn -e metaroce.sx.ssn
--
-- Preferences (Edit > Preferences > Protocols > MetaRoCE, or on the tshark
-- command line -o metaroce.udp_port:NNNN, -o metaroce.check_crc:FALSE):
--   udp_port   UDP destination port of MetaRoCE (module parameter udp_port,
--              default 4793)
--   check_crc  verify the CRC32C trailer
--
-- Installing for Wireshark: see Documentation/metaroce/usage.md.

local p = Proto("metaroce", "MetaRoCE")

local DEFAULT_PORT = 4793

p.prefs.udp_port = Pref.uint("UDP port", DEFAULT_PORT,
	"UDP destination port of MetaRoCE (the udp_port module parameter)")
p.prefs.check_crc = Pref.bool("Verify CRC32C", true,
	"Check the CRC32C trailer of every packet (spec 4.5)")

-- Packet types (spec 5.4).
local types = {
	[0x01] = "SEND", [0x02] = "SEND_IMM", [0x03] = "SEND_INV",
	[0x04] = "WRITE", [0x05] = "WRITE_IMM", [0x06] = "READ_REQ",
	[0x07] = "READ_RESP", [0x08] = "ATOMIC_CS", [0x09] = "ATOMIC_FA",
	[0x0A] = "ATOMIC_RESP", [0x0B] = "STREAM_CLOSE",
	[0x20] = "ACK", [0x21] = "NAK", [0x22] = "PROBE",
	[0x23] = "PROBE_REPLY", [0x24] = "SYNC",
	[0x28] = "CONNECT", [0x29] = "CONNECT_ACK", [0x2A] = "CONN_CLOSE",
	[0x2B] = "RESET", [0x30] = "DATAGRAM",
}

local nak_codes = {
	[1] = "RNR", [2] = "NOT_READY", [3] = "REMOTE_ACCESS",
	[4] = "INVALID_REQUEST", [5] = "LENGTH", [6] = "REMOTE_OPERATIONAL",
	[7] = "SEQUENCE", [8] = "STREAM_CLOSED",
}

local reset_reasons = {
	[1] = "NO_CONNECTION", [2] = "CONNECT_REQUIRED", [3] = "PROTOCOL",
	[4] = "RESOURCE", [5] = "VERSION", [6] = "ADMIN", [7] = "AUTH",
	[8] = "PEER_RESTART",
}

local ccx_ops = { [1] = "REQUEST", [2] = "ACCEPT", [3] = "REFUSE" }
local ccx_reasons = { [0] = "idle", [1] = "administrative", [2] = "device removal" }
local scx_reasons = { [1] = "QP destroyed", [2] = "QP moved to RESET", [3] = "QP moved to ERROR" }
local crc_status = { [0] = "Bad", [1] = "Good", [2] = "Unverified" }

-- Base Header (spec 5.2) and flags (spec 5.3).
local f = {
	ver = ProtoField.uint8("metaroce.ver", "Ver", base.DEC, nil, 0xF0),
	rsvd = ProtoField.uint8("metaroce.rsvd", "Rsvd", base.HEX, nil, 0x0F),
	type = ProtoField.uint8("metaroce.type", "Type", base.HEX, types),
	flags = ProtoField.uint16("metaroce.flags", "Flags", base.HEX),
	flag_ar = ProtoField.bool("metaroce.flags.ar", "AR", 16, nil, 0x8000),
	flag_se = ProtoField.bool("metaroce.flags.se", "SE", 16, nil, 0x4000),
	flag_last = ProtoField.bool("metaroce.flags.last", "LAST", 16, nil, 0x2000),
	flag_retx = ProtoField.bool("metaroce.flags.retx", "RETX", 16, nil, 0x1000),
	flag_ece = ProtoField.bool("metaroce.flags.ece", "ECE", 16, nil, 0x0800),
	flag_bklg = ProtoField.bool("metaroce.flags.bklg", "BKLG", 16, nil, 0x0400),
	flag_mac = ProtoField.bool("metaroce.flags.mac", "MAC", 16, nil, 0x0200),
	flag_akx = ProtoField.bool("metaroce.flags.akx", "AKX", 16, nil, 0x0100),
	flag_rsvd = ProtoField.uint16("metaroce.flags.reserved", "Reserved", base.HEX, nil, 0x00FF),
	hdrlen = ProtoField.uint8("metaroce.hdrlen", "HdrLen", base.DEC),
	path_id = ProtoField.uint8("metaroce.path_id", "Path ID", base.DEC),
	payload_len = ProtoField.uint16("metaroce.payload_len", "Payload Length", base.DEC),
	dcid = ProtoField.uint32("metaroce.dcid", "Destination Connection ID (DCID)", base.HEX),
	scid = ProtoField.uint32("metaroce.scid", "Source Connection ID (SCID)", base.HEX),
	psn = ProtoField.uint32("metaroce.psn", "Path Sequence Number (PSN)", base.DEC),
	ack_seq = ProtoField.uint32("metaroce.ack_seq", "ACK Sequence", base.DEC),
	plw = ProtoField.uint32("metaroce.plw", "Path Low Watermark (PLW)", base.DEC),
	token = ProtoField.uint64("metaroce.token", "Token", base.HEX),

	-- Stream Extension (5.5.1)
	sx = ProtoField.none("metaroce.sx", "Stream Extension (SX)"),
	sx_segshift = ProtoField.uint8("metaroce.sx.segshift", "SegShift", base.DEC, nil, 0xF0),
	sx_segsize = ProtoField.uint32("metaroce.sx.segsize", "Segment size", base.DEC),
	sx_rsvd = ProtoField.uint8("metaroce.sx.rsvd", "Rsvd", base.HEX, nil, 0x0F),
	sx_dqpn = ProtoField.uint32("metaroce.sx.dqpn", "Destination QPN", base.HEX, nil, 0x00FFFFFF),
	sx_reserved = ProtoField.uint8("metaroce.sx.reserved", "Reserved", base.HEX),
	sx_sqpn = ProtoField.uint32("metaroce.sx.sqpn", "Source QPN", base.HEX, nil, 0x00FFFFFF),
	sx_ssn = ProtoField.uint32("metaroce.sx.ssn", "Stream Sequence Number (SSN)", base.DEC),
	sx_msn = ProtoField.uint32("metaroce.sx.msn", "Message Sequence Number (MSN)", base.DEC),
	sx_msg_len = ProtoField.uint32("metaroce.sx.msg_len", "Message Length", base.DEC),
	sx_offset = ProtoField.uint32("metaroce.sx.offset", "Offset", base.DEC),

	-- RDMA Extension (5.5.2)
	rx = ProtoField.none("metaroce.rx", "RDMA Extension (RX)"),
	rx_va = ProtoField.uint64("metaroce.rx.va", "Virtual Address", base.HEX),
	rx_rkey = ProtoField.uint32("metaroce.rx.rkey", "R_Key", base.HEX),
	-- Immediate (5.5.3) and Invalidate (5.5.4) Extensions
	ix_imm = ProtoField.bytes("metaroce.ix.imm", "Immediate Data"),
	vx_rkey = ProtoField.uint32("metaroce.vx.rkey", "Invalidate R_Key", base.HEX),

	-- Atomic Extension (5.5.5) and Atomic Response Extension (5.5.6)
	atx = ProtoField.none("metaroce.atx", "Atomic Extension (ATX)"),
	atx_va = ProtoField.uint64("metaroce.atx.va", "Virtual Address", base.HEX),
	atx_swap_add = ProtoField.uint64("metaroce.atx.swap_add", "Swap or Add Operand", base.HEX),
	atx_compare = ProtoField.uint64("metaroce.atx.compare", "Compare Operand", base.HEX),
	atx_rkey = ProtoField.uint32("metaroce.atx.rkey", "R_Key", base.HEX),
	atx_reserved = ProtoField.uint32("metaroce.atx.reserved", "Reserved", base.HEX),
	arx_orig = ProtoField.uint64("metaroce.arx.orig", "Original Value", base.HEX),

	-- ACK Extension (5.5.7)
	akx = ProtoField.none("metaroce.akx", "ACK Extension (AKX)"),
	akx_cum_psn = ProtoField.uint32("metaroce.akx.cum_psn", "Cumulative PSN", base.DEC),
	akx_ce_count = ProtoField.uint32("metaroce.akx.ce_count", "CE Count", base.DEC),
	akx_rx_count = ProtoField.uint32("metaroce.akx.rx_count", "Rx Count", base.DEC),
	akx_rate_hint = ProtoField.uint16("metaroce.akx.rate_hint", "Rate Hint", base.HEX),
	akx_rate_mbps = ProtoField.uint64("metaroce.akx.rate_mbps", "Rate Hint (Mb/s)", base.DEC),
	akx_ack_delay = ProtoField.uint16("metaroce.akx.ack_delay", "ACK Delay (us)", base.DEC),
	akx_num_sr = ProtoField.uint8("metaroce.akx.num_sr", "Num SR", base.DEC),
	akx_flags = ProtoField.uint8("metaroce.akx.flags", "ACK Flags", base.HEX),
	akx_no_state = ProtoField.bool("metaroce.akx.flags.no_state", "NO_STATE", 8, nil, 0x80),
	akx_reordered = ProtoField.bool("metaroce.akx.flags.reordered", "REORDERED", 8, nil, 0x40),
	akx_acked_path = ProtoField.uint8("metaroce.akx.acked_path_id", "Acked Path ID", base.DEC),
	akx_reserved = ProtoField.uint8("metaroce.akx.reserved", "Reserved", base.HEX),
	akx_sack = ProtoField.bytes("metaroce.akx.sack", "SACK Bitmap"),
	akx_sacked = ProtoField.uint32("metaroce.akx.sacked_psn", "SACKed PSN", base.DEC),

	-- Stream Record (5.5.8)
	sr = ProtoField.none("metaroce.sr", "Stream Record (SR)"),
	sr_flags = ProtoField.uint8("metaroce.sr.flags", "SR Flags", base.HEX),
	sr_credit = ProtoField.bool("metaroce.sr.flags.credit", "CREDIT", 8, nil, 0x80),
	sr_unlimited = ProtoField.bool("metaroce.sr.flags.unlimited", "UNLIMITED", 8, nil, 0x40),
	sr_sync_reply = ProtoField.bool("metaroce.sr.flags.sync_reply", "SYNC_REPLY", 8, nil, 0x20),
	sr_req_qpn = ProtoField.uint32("metaroce.sr.req_qpn", "Requester QPN", base.HEX, nil, 0x00FFFFFF),
	sr_reserved = ProtoField.uint8("metaroce.sr.reserved", "Reserved", base.HEX),
	sr_resp_qpn = ProtoField.uint32("metaroce.sr.resp_qpn", "Responder QPN", base.HEX, nil, 0x00FFFFFF),
	sr_completed_ssn = ProtoField.uint32("metaroce.sr.completed_ssn", "Completed SSN", base.DEC),
	sr_msn_limit = ProtoField.uint32("metaroce.sr.msn_limit", "MSN Limit", base.DEC),

	-- NAK Extension (5.5.9)
	nkx = ProtoField.none("metaroce.nkx", "NAK Extension (NKX)"),
	nkx_code = ProtoField.uint8("metaroce.nkx.code", "Code", base.DEC, nak_codes),
	nkx_req_qpn = ProtoField.uint32("metaroce.nkx.req_qpn", "Requester QPN", base.HEX, nil, 0x00FFFFFF),
	nkx_detail = ProtoField.uint8("metaroce.nkx.detail", "Detail", base.DEC),
	nkx_resp_qpn = ProtoField.uint32("metaroce.nkx.resp_qpn", "Responder QPN", base.HEX, nil, 0x00FFFFFF),
	nkx_ssn = ProtoField.uint32("metaroce.nkx.ssn", "SSN", base.DEC),
	nkx_msn = ProtoField.uint32("metaroce.nkx.msn", "MSN", base.DEC),
	nkx_param = ProtoField.uint32("metaroce.nkx.param", "Parameter", base.DEC),
	nkx_completed_ssn = ProtoField.uint32("metaroce.nkx.completed_ssn", "Completed SSN", base.DEC),

	-- Probe Extension (5.5.10)
	pbx = ProtoField.none("metaroce.pbx", "Probe Extension (PBX)"),
	pbx_id = ProtoField.uint32("metaroce.pbx.probe_id", "Probe ID", base.HEX),
	pbx_flags = ProtoField.uint8("metaroce.pbx.flags", "Probe Flags", base.HEX),
	pbx_mtu = ProtoField.bool("metaroce.pbx.flags.mtu", "MTU", 8, nil, 0x80),
	pbx_keepalive = ProtoField.bool("metaroce.pbx.flags.keepalive", "KEEPALIVE", 8, nil, 0x40),
	pbx_reserved = ProtoField.uint24("metaroce.pbx.reserved", "Reserved", base.HEX),
	pbx_timestamp = ProtoField.uint64("metaroce.pbx.timestamp", "Timestamp", base.HEX),

	-- SYNC Extension and Entries (5.5.11)
	syx = ProtoField.none("metaroce.syx", "SYNC Extension (SYX)"),
	syx_num = ProtoField.uint8("metaroce.syx.num_entries", "Num Entries", base.DEC),
	syx_reserved = ProtoField.uint24("metaroce.syx.reserved", "Reserved", base.HEX),
	sye = ProtoField.none("metaroce.sye", "SYNC Entry (SYE)"),
	sye_req_qpn = ProtoField.uint32("metaroce.sye.req_qpn", "Requester QPN", base.HEX, nil, 0x00FFFFFF),
	sye_resp_qpn = ProtoField.uint32("metaroce.sye.resp_qpn", "Responder QPN", base.HEX, nil, 0x00FFFFFF),
	sye_oldest_ssn = ProtoField.uint32("metaroce.sye.oldest_pending_ssn", "Oldest Pending SSN", base.DEC),

	-- Connect Extension and Plane Addresses (5.5.12)
	cx = ProtoField.none("metaroce.cx", "Connect Extension (CX)"),
	cx_vmin = ProtoField.uint8("metaroce.cx.vmin", "VMin", base.DEC, nil, 0xF0),
	cx_vmax = ProtoField.uint8("metaroce.cx.vmax", "VMax", base.DEC, nil, 0x0F),
	cx_num_addrs = ProtoField.uint8("metaroce.cx.num_addrs", "Num Addrs", base.DEC),
	cx_caps = ProtoField.uint16("metaroce.cx.caps", "Capabilities", base.HEX),
	cx_cap_auth = ProtoField.bool("metaroce.cx.caps.auth", "AUTH", 16, nil, 0x8000),
	cx_cap_hint = ProtoField.bool("metaroce.cx.caps.hint", "HINT", 16, nil, 0x4000),
	cx_cap_atomic = ProtoField.bool("metaroce.cx.caps.atomic", "ATOMIC", 16, nil, 0x2000),
	cx_cap_cack = ProtoField.bool("metaroce.cx.caps.cack", "CACK", 16, nil, 0x1000),
	cx_epoch = ProtoField.uint64("metaroce.cx.epoch", "Epoch", base.HEX),
	cx_token = ProtoField.uint64("metaroce.cx.token", "Token", base.HEX),
	cx_guid = ProtoField.uint64("metaroce.cx.guid", "Device GUID", base.HEX),
	cx_maxsh = ProtoField.uint8("metaroce.cx.max_seg_shift", "MaxSh (Max Seg Shift)", base.DEC, nil, 0xF0),
	cx_rsvd = ProtoField.uint8("metaroce.cx.rsvd", "Rsvd", base.HEX, nil, 0x0F),
	cx_max_rx_paths = ProtoField.uint8("metaroce.cx.max_rx_paths", "Max Rx Paths", base.DEC),
	cx_seg_win_shift = ProtoField.uint8("metaroce.cx.seg_win_shift", "Seg Win Shift", base.DEC),
	cx_reserved0 = ProtoField.uint8("metaroce.cx.reserved0", "Reserved", base.HEX),
	cx_rx_msg_slots = ProtoField.uint32("metaroce.cx.rx_msg_slots", "Rx Message Slots", base.DEC),
	cx_max_streams = ProtoField.uint32("metaroce.cx.max_streams", "Max Streams", base.DEC),
	cx_auth_key_id = ProtoField.uint32("metaroce.cx.auth_key_id", "Auth Key ID", base.HEX),
	cx_auth_nonce = ProtoField.bytes("metaroce.cx.auth_nonce", "Auth Nonce"),
	cx_max_ack_delay = ProtoField.uint16("metaroce.cx.max_ack_delay", "Max ACK Delay (us)", base.DEC),
	cx_reserved1 = ProtoField.uint16("metaroce.cx.reserved1", "Reserved", base.HEX),
	cx_addr = ProtoField.ipv6("metaroce.cx.addr", "Plane Address"),

	-- Reset Extension (5.5.13)
	rsx = ProtoField.none("metaroce.rsx", "Reset Extension (RSX)"),
	rsx_reason = ProtoField.uint8("metaroce.rsx.reason", "Reason", base.DEC, reset_reasons),
	rsx_vmin = ProtoField.uint8("metaroce.rsx.vmin", "VMin", base.DEC, nil, 0xF0),
	rsx_vmax = ProtoField.uint8("metaroce.rsx.vmax", "VMax", base.DEC, nil, 0x0F),
	rsx_retry_after = ProtoField.uint16("metaroce.rsx.retry_after", "Retry After (ms)", base.DEC),
	rsx_epoch = ProtoField.uint64("metaroce.rsx.epoch", "Sender Epoch", base.HEX),
	rsx_reserved = ProtoField.uint32("metaroce.rsx.reserved", "Reserved", base.HEX),

	-- Connection Close Extension (5.5.14)
	ccx = ProtoField.none("metaroce.ccx", "Connection Close Extension (CCX)"),
	ccx_op = ProtoField.uint8("metaroce.ccx.op", "Op", base.DEC, ccx_ops),
	ccx_reserved = ProtoField.uint24("metaroce.ccx.reserved", "Reserved", base.HEX),
	ccx_reason = ProtoField.uint32("metaroce.ccx.reason", "Reason", base.DEC, ccx_reasons),

	-- Stream Close Extension (5.5.15)
	scx = ProtoField.none("metaroce.scx", "Stream Close Extension (SCX)"),
	scx_reason = ProtoField.uint8("metaroce.scx.reason", "Reason", base.DEC, scx_reasons),
	scx_nak_code = ProtoField.uint8("metaroce.scx.nak_code", "NAK Code", base.DEC, nak_codes),
	scx_detail = ProtoField.uint8("metaroce.scx.detail", "Detail", base.DEC),
	scx_reserved = ProtoField.uint8("metaroce.scx.reserved", "Reserved", base.HEX),
	scx_failed_ssn = ProtoField.uint32("metaroce.scx.failed_ssn", "Failed SSN", base.DEC),

	-- Datagram Extension (5.5.16)
	dx = ProtoField.none("metaroce.dx", "Datagram Extension (DX)"),
	dx_dflags = ProtoField.uint8("metaroce.dx.dflags", "DFlags", base.HEX),
	dx_imm_flag = ProtoField.bool("metaroce.dx.dflags.imm", "IMM", 8, nil, 0x80),
	dx_dqpn = ProtoField.uint32("metaroce.dx.dqpn", "Destination QPN", base.HEX, nil, 0x00FFFFFF),
	dx_reserved = ProtoField.uint8("metaroce.dx.reserved", "Reserved", base.HEX),
	dx_sqpn = ProtoField.uint32("metaroce.dx.sqpn", "Source QPN", base.HEX, nil, 0x00FFFFFF),
	dx_qkey = ProtoField.uint32("metaroce.dx.qkey", "Q_Key", base.HEX),
	dx_imm = ProtoField.bytes("metaroce.dx.imm", "Immediate Data"),

	-- Payload, MAC and trailer (4.4, 4.5)
	payload = ProtoField.bytes("metaroce.payload", "Payload"),
	mac = ProtoField.bytes("metaroce.mac", "MAC"),
	crc = ProtoField.uint32("metaroce.crc", "CRC32C", base.HEX),
	crc_calc = ProtoField.uint32("metaroce.crc.calculated", "Calculated CRC32C", base.HEX),
	crc_status = ProtoField.uint8("metaroce.crc.status", "CRC32C status", base.DEC, crc_status),
}

local fl = {}
for _, v in pairs(f) do fl[#fl + 1] = v end
p.fields = fl

local e_len = ProtoExpert.new("metaroce.bad_length", "Malformed packet",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_crc = ProtoExpert.new("metaroce.bad_crc", "Bad CRC32C",
	expert.group.CHECKSUM, expert.severity.ERROR)
local e_hdrlen = ProtoExpert.new("metaroce.bad_hdrlen", "HdrLen differs from spec 5.6",
	expert.group.MALFORMED, expert.severity.WARN)
local e_type = ProtoExpert.new("metaroce.bad_type", "Undefined packet type",
	expert.group.MALFORMED, expert.severity.WARN)
p.experts = { e_len, e_crc, e_hdrlen, e_type }

-- CRC-32C (Castagnoli), reflected polynomial 0x82F63B78 (spec 4.5).
local crc_table = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if bit32.band(c, 1) ~= 0 then
			c = bit32.bxor(bit32.rshift(c, 1), 0x82F63B78)
		else
			c = bit32.rshift(c, 1)
		end
	end
	crc_table[i] = c
end

local function crc32c(bytes, n)
	local crc = 0xFFFFFFFF
	local band, bxor, rshift = bit32.band, bit32.bxor, bit32.rshift
	for i = 0, n - 1 do
		crc = bxor(crc_table[band(bxor(crc, bytes:get_index(i)), 0xFF)], rshift(crc, 8))
	end
	return bxor(crc, 0xFFFFFFFF)
end

-- Rate hint code to Mb/s (spec 12.4.3, Appendix B).
local function rate_mbps(code)
	if code == 0 then return nil end
	local e = bit32.rshift(code, 11)
	local m = bit32.band(code, 0x7FF)
	if e == 0 then return nil end
	return math.floor((2048 + m) * 2 ^ (e - 1) / 2048)
end

-- Fixed HdrLen in words per type (spec 5.6); nil for counted types.
local fixed_hdrlen = {
	[0x01] = 14, [0x02] = 15, [0x03] = 15, [0x04] = 17, [0x05] = 18,
	[0x06] = 17, [0x07] = 14, [0x08] = 22, [0x09] = 22, [0x0A] = 16,
	[0x0B] = 16, [0x21] = 14, [0x22] = 12, [0x23] = 25, [0x2A] = 10,
	[0x2B] = 12, [0x30] = 12,
}

local function qpn_pair(tree, buf, off, f_rsvd, f_qpn)
	tree:add(f_rsvd, buf(off, 1))
	tree:add(f_qpn, buf(off, 4))
end

local function dissect_sx(buf, tree, off)
	local t = tree:add(f.sx, buf(off, 24))
	t:add(f.sx_segshift, buf(off, 1))
	t:add(f.sx_segsize, buf(off, 1), bit32.lshift(256, bit32.rshift(buf(off, 1):uint(), 4)))
		:set_generated()
	t:add(f.sx_rsvd, buf(off, 1))
	t:add(f.sx_dqpn, buf(off, 4))
	qpn_pair(t, buf, off + 4, f.sx_reserved, f.sx_sqpn)
	t:add(f.sx_ssn, buf(off + 8, 4))
	t:add(f.sx_msn, buf(off + 12, 4))
	t:add(f.sx_msg_len, buf(off + 16, 4))
	t:add(f.sx_offset, buf(off + 20, 4))
	return string.format(" QPN 0x%x>0x%x SSN %u", buf(off + 4, 4):uint() % 0x1000000,
		buf(off, 4):uint() % 0x1000000, buf(off + 8, 4):uint())
end

local function dissect_rx(buf, tree, off)
	local t = tree:add(f.rx, buf(off, 12))
	t:add(f.rx_va, buf(off, 8))
	t:add(f.rx_rkey, buf(off + 8, 4))
end

local function dissect_akx(buf, tree, off)
	local t = tree:add(f.akx, buf(off, 52))
	local cum = buf(off, 4):uint()
	t:add(f.akx_cum_psn, buf(off, 4))
	t:add(f.akx_ce_count, buf(off + 4, 4))
	t:add(f.akx_rx_count, buf(off + 8, 4))
	local code = buf(off + 12, 2):uint()
	t:add(f.akx_rate_hint, buf(off + 12, 2))
	local r = rate_mbps(code)
	if r then t:add(f.akx_rate_mbps, buf(off + 12, 2), UInt64(r)):set_generated() end
	t:add(f.akx_ack_delay, buf(off + 14, 2))
	t:add(f.akx_num_sr, buf(off + 16, 1))
	local ft = t:add(f.akx_flags, buf(off + 17, 1))
	ft:add(f.akx_no_state, buf(off + 17, 1))
	ft:add(f.akx_reordered, buf(off + 17, 1))
	t:add(f.akx_acked_path, buf(off + 18, 1))
	t:add(f.akx_reserved, buf(off + 19, 1))
	local st = t:add(f.akx_sack, buf(off + 20, 32))
	for i = 0, 255 do
		local byte = buf(off + 20 + math.floor(i / 8), 1):uint()
		if bit32.band(byte, bit32.lshift(1, 7 - i % 8)) ~= 0 then
			st:add(f.akx_sacked, buf(off + 20 + math.floor(i / 8), 1),
				(cum + 1 + i) % 0x100000000):set_generated()
		end
	end
	return cum
end

local function dissect_pbx(buf, tree, off)
	local t = tree:add(f.pbx, buf(off, 16))
	t:add(f.pbx_id, buf(off, 4))
	local ft = t:add(f.pbx_flags, buf(off + 4, 1))
	ft:add(f.pbx_mtu, buf(off + 4, 1))
	ft:add(f.pbx_keepalive, buf(off + 4, 1))
	t:add(f.pbx_reserved, buf(off + 5, 3))
	t:add(f.pbx_timestamp, buf(off + 8, 8))
end

-- Extension headers of one packet; returns text for the Info column.
local function dissect_ext(ty, buf, tree, hlen)
	local info = ""
	local function need(n)
		if hlen < n then
			tree:add_proto_expert_info(e_hdrlen, "headers too short for " .. (types[ty] or "type"))
			return false
		end
		return true
	end
	if ty >= 0x01 and ty <= 0x0B then
		if not need(56) then return info end
		info = dissect_sx(buf, tree, 32)
		if ty == 0x02 then
			if need(60) then tree:add(f.ix_imm, buf(56, 4)) end
		elseif ty == 0x03 then
			if need(60) then tree:add(f.vx_rkey, buf(56, 4)) end
		elseif ty == 0x04 or ty == 0x06 then
			if need(68) then dissect_rx(buf, tree, 56) end
		elseif ty == 0x05 then
			if need(72) then
				dissect_rx(buf, tree, 56)
				tree:add(f.ix_imm, buf(68, 4))
			end
		elseif ty == 0x08 or ty == 0x09 then
			if need(88) then
				local t = tree:add(f.atx, buf(56, 32))
				t:add(f.atx_va, buf(56, 8))
				t:add(f.atx_swap_add, buf(64, 8))
				t:add(f.atx_compare, buf(72, 8))
				t:add(f.atx_rkey, buf(80, 4))
				t:add(f.atx_reserved, buf(84, 4))
			end
		elseif ty == 0x0A then
			if need(64) then tree:add(f.arx_orig, buf(56, 8)) end
		elseif ty == 0x0B then
			if need(64) then
				local t = tree:add(f.scx, buf(56, 8))
				t:add(f.scx_reason, buf(56, 1))
				t:add(f.scx_nak_code, buf(57, 1))
				t:add(f.scx_detail, buf(58, 1))
				t:add(f.scx_reserved, buf(59, 1))
				t:add(f.scx_failed_ssn, buf(60, 4))
			end
		end
		-- A carried AKX after the type's extensions (8.6)
		local off = fixed_hdrlen[ty] * 4
		if bit32.band(buf(2, 2):uint(), 0x0100) ~= 0 and need(off + 52) then
			dissect_akx(buf, tree, off)
			info = info .. string.format(" +ACK path %u", buf(off + 18, 1):uint())
		end
	elseif ty == 0x20 then
		if not need(84) then return info end
		local cum = dissect_akx(buf, tree, 32)
		local n = buf(48, 1):uint()
		info = string.format(" CumPSN %u SR %u", cum, n)
		for i = 0, n - 1 do
			local o = 84 + 16 * i
			if o + 16 > hlen then
				tree:add_proto_expert_info(e_hdrlen, "Num SR exceeds HdrLen")
				break
			end
			local t = tree:add(f.sr, buf(o, 16))
			local ft = t:add(f.sr_flags, buf(o, 1))
			ft:add(f.sr_credit, buf(o, 1))
			ft:add(f.sr_unlimited, buf(o, 1))
			ft:add(f.sr_sync_reply, buf(o, 1))
			t:add(f.sr_req_qpn, buf(o, 4))
			qpn_pair(t, buf, o + 4, f.sr_reserved, f.sr_resp_qpn)
			t:add(f.sr_completed_ssn, buf(o + 8, 4))
			t:add(f.sr_msn_limit, buf(o + 12, 4))
		end
	elseif ty == 0x21 then
		if not need(56) then return info end
		local t = tree:add(f.nkx, buf(32, 24))
		t:add(f.nkx_code, buf(32, 1))
		t:add(f.nkx_req_qpn, buf(32, 4))
		t:add(f.nkx_detail, buf(36, 1))
		t:add(f.nkx_resp_qpn, buf(36, 4))
		t:add(f.nkx_ssn, buf(40, 4))
		t:add(f.nkx_msn, buf(44, 4))
		t:add(f.nkx_param, buf(48, 4))
		t:add(f.nkx_completed_ssn, buf(52, 4))
		info = string.format(" %s SSN %u", nak_codes[buf(32, 1):uint()] or "?",
			buf(40, 4):uint())
	elseif ty == 0x22 then
		if need(48) then dissect_pbx(buf, tree, 32) end
	elseif ty == 0x23 then
		if need(100) then
			dissect_pbx(buf, tree, 32)
			dissect_akx(buf, tree, 48)
		end
	elseif ty == 0x24 then
		if not need(36) then return info end
		local t = tree:add(f.syx, buf(32, 4))
		local n = buf(32, 1):uint()
		t:add(f.syx_num, buf(32, 1))
		t:add(f.syx_reserved, buf(33, 3))
		for i = 0, n - 1 do
			local o = 36 + 12 * i
			if o + 12 > hlen then
				tree:add_proto_expert_info(e_hdrlen, "Num Entries exceeds HdrLen")
				break
			end
			local e = tree:add(f.sye, buf(o, 12))
			qpn_pair(e, buf, o, f.sx_reserved, f.sye_req_qpn)
			qpn_pair(e, buf, o + 4, f.sx_reserved, f.sye_resp_qpn)
			e:add(f.sye_oldest_ssn, buf(o + 8, 4))
		end
	elseif ty == 0x28 or ty == 0x29 then
		if not need(96) then return info end
		local t = tree:add(f.cx, buf(32, 64))
		t:add(f.cx_vmin, buf(32, 1))
		t:add(f.cx_vmax, buf(32, 1))
		t:add(f.cx_num_addrs, buf(33, 1))
		local ct = t:add(f.cx_caps, buf(34, 2))
		ct:add(f.cx_cap_auth, buf(34, 2))
		ct:add(f.cx_cap_hint, buf(34, 2))
		ct:add(f.cx_cap_atomic, buf(34, 2))
		ct:add(f.cx_cap_cack, buf(34, 2))
		t:add(f.cx_epoch, buf(36, 8))
		t:add(f.cx_token, buf(44, 8))
		t:add(f.cx_guid, buf(52, 8))
		t:add(f.cx_maxsh, buf(60, 1))
		t:add(f.cx_rsvd, buf(60, 1))
		t:add(f.cx_max_rx_paths, buf(61, 1))
		t:add(f.cx_seg_win_shift, buf(62, 1))
		t:add(f.cx_reserved0, buf(63, 1))
		t:add(f.cx_rx_msg_slots, buf(64, 4))
		t:add(f.cx_max_streams, buf(68, 4))
		t:add(f.cx_auth_key_id, buf(72, 4))
		t:add(f.cx_auth_nonce, buf(76, 16))
		t:add(f.cx_max_ack_delay, buf(92, 2))
		t:add(f.cx_reserved1, buf(94, 2))
		local n = buf(33, 1):uint()
		for i = 0, n - 1 do
			local o = 96 + 16 * i
			if o + 16 > hlen then
				tree:add_proto_expert_info(e_hdrlen, "Num Addrs exceeds HdrLen")
				break
			end
			t:add(f.cx_addr, buf(o, 16))
		end
	elseif ty == 0x2A then
		if not need(40) then return info end
		local t = tree:add(f.ccx, buf(32, 8))
		t:add(f.ccx_op, buf(32, 1))
		t:add(f.ccx_reserved, buf(33, 3))
		t:add(f.ccx_reason, buf(36, 4))
		info = " " .. (ccx_ops[buf(32, 1):uint()] or "?")
	elseif ty == 0x2B then
		if not need(48) then return info end
		local t = tree:add(f.rsx, buf(32, 16))
		t:add(f.rsx_reason, buf(32, 1))
		t:add(f.rsx_vmin, buf(33, 1))
		t:add(f.rsx_vmax, buf(33, 1))
		t:add(f.rsx_retry_after, buf(34, 2))
		t:add(f.rsx_epoch, buf(36, 8))
		t:add(f.rsx_reserved, buf(44, 4))
		info = " " .. (reset_reasons[buf(32, 1):uint()] or "?")
	elseif ty == 0x30 then
		if not need(48) then return info end
		local t = tree:add(f.dx, buf(32, 16))
		local ft = t:add(f.dx_dflags, buf(32, 1))
		ft:add(f.dx_imm_flag, buf(32, 1))
		t:add(f.dx_dqpn, buf(32, 4))
		qpn_pair(t, buf, 36, f.dx_reserved, f.dx_sqpn)
		t:add(f.dx_qkey, buf(40, 4))
		t:add(f.dx_imm, buf(44, 4))
		info = string.format(" QPN 0x%x>0x%x", buf(36, 4):uint() % 0x1000000,
			buf(32, 4):uint() % 0x1000000)
	end
	return info
end

-- One MetaRoCE packet (buf holds exactly it); returns its Info text.
local function dissect_one(buf, root)
	local len = buf:len()
	local tree = root:add(p, buf())
	if len < 36 then
		tree:add_proto_expert_info(e_len, "shorter than Base Header and CRC32C (36 bytes)")
		return "MetaRoCE runt"
	end

	local ty = buf(1, 1):uint()
	local flags = buf(2, 2):uint()
	local hlen = buf(4, 1):uint() * 4
	local plen = buf(6, 2):uint()
	local has_mac = bit32.band(flags, 0x0200) ~= 0 and ty ~= 0x30
	local seq = ty >= 0x01 and ty <= 0x1F
	local ctrl_ack = ty == 0x20 or ty == 0x21 or ty == 0x23

	local bh = tree:add(buf(0, 32), "Base Header")
	bh:add(f.ver, buf(0, 1))
	bh:add(f.rsvd, buf(0, 1))
	local tt = bh:add(f.type, buf(1, 1))
	if not types[ty] then tt:add_proto_expert_info(e_type) end
	local ft = bh:add(f.flags, buf(2, 2))
	for _, k in ipairs({ "flag_ar", "flag_se", "flag_last", "flag_retx",
		"flag_ece", "flag_bklg", "flag_mac", "flag_akx", "flag_rsvd" }) do
		ft:add(f[k], buf(2, 2))
	end
	local ht = bh:add(f.hdrlen, buf(4, 1))
	ht:append_text(string.format(" words (%u bytes)", hlen))
	bh:add(f.path_id, buf(5, 1))
	bh:add(f.payload_len, buf(6, 2))
	bh:add(f.dcid, buf(8, 4))
	bh:add(f.scid, buf(12, 4))
	bh:add(ctrl_ack and f.ack_seq or f.psn, buf(16, 4))
	bh:add(f.plw, buf(20, 4))
	bh:add(f.token, buf(24, 8))

	local name = types[ty] or string.format("type 0x%02x", ty)
	local info = name
	if seq then
		info = info .. string.format(" path %u PSN %u", buf(5, 1):uint(), buf(16, 4):uint())
	elseif ctrl_ack then
		info = info .. string.format(" path %u", buf(5, 1):uint())
	end
	if bit32.band(flags, 0x1000) ~= 0 and seq then info = info .. " RETX" end

	local want = hlen + plen + (has_mac and 16 or 0) + 4
	if want ~= len or hlen < 32 then
		tree:add_proto_expert_info(e_len, string.format(
			"UDP payload %u bytes, headers say %u (spec 4.4)", len, want))
		return info .. " [malformed]"
	end
	local fix = fixed_hdrlen[ty]
	-- A stream packet's carried AKX: 13 words more (8.6)
	if fix and ty <= 0x0B and bit32.band(flags, 0x0100) ~= 0 then fix = fix + 13 end
	if fix and fix * 4 ~= hlen then
		ht:add_proto_expert_info(e_hdrlen, string.format("expected %u words", fix))
	end

	info = info .. dissect_ext(ty, buf, tree, hlen)

	if plen > 0 then tree:add(f.payload, buf(hlen, plen)) end
	if has_mac then tree:add(f.mac, buf(hlen + plen, 16)) end
	local coff = len - 4
	local ct = tree:add(f.crc, buf(coff, 4))
	if p.prefs.check_crc then
		local calc = crc32c(buf(0, coff):bytes(), coff)
		ct:add(f.crc_calc, buf(coff, 4), calc):set_generated()
		if calc == buf(coff, 4):uint() then
			ct:add(f.crc_status, buf(coff, 4), 1):set_generated()
		else
			ct:add(f.crc_status, buf(coff, 4), 0):set_generated()
			ct:add_proto_expert_info(e_crc)
			info = info .. " [bad CRC32C]"
		end
	else
		ct:add(f.crc_status, buf(coff, 4), 2):set_generated()
	end
	return info
end

-- The length a packet's headers give it (spec 4.4).
local function packet_len(buf, off)
	local ty = buf(off + 1, 1):uint()
	local mac = bit32.band(buf(off + 2, 2):uint(), 0x0200) ~= 0 and ty ~= 0x30
	return buf(off + 4, 1):uint() * 4 + buf(off + 6, 2):uint() + (mac and 16 or 0) + 4
end

-- A capture on a host can show a UDP GSO batch (spec 4.8) as one
-- datagram: the packets back to back, each delimited by its own lengths.
function p.dissector(buf, pinfo, root)
	local len = buf:len()
	if len < 1 then return 0 end
	pinfo.cols.protocol = "MetaRoCE"
	local off, infos = 0, {}
	while off < len do
		local size = len - off
		if size >= 36 then
			local want = packet_len(buf, off)
			if want >= 36 and want < size then size = want end
		end
		infos[#infos + 1] = dissect_one(buf(off, size):tvb(), root)
		off = off + size
	end
	if #infos > 1 then
		pinfo.cols.info = string.format("[batch of %u] ", #infos) .. table.concat(infos, "; ")
	else
		pinfo.cols.info = infos[1]
	end
	return len
end

local registered_port = nil
local function register_port()
	local udp = DissectorTable.get("udp.port")
	if registered_port then udp:remove(registered_port, p) end
	registered_port = p.prefs.udp_port
	udp:add(registered_port, p)
end

function p.prefs_changed()
	if registered_port ~= p.prefs.udp_port then register_port() end
end

register_port()
