-- rocescope's analysis in Wireshark.
--
-- A post-dissector that reads the records `rocescope annotate` writes in packet comments and
-- shows them as fields named as rocescope names its own (rocescope.analysis.gap, ...) and as
-- expert items for the findings that name the frame. Print it with `rocescope
-- wireshark-plugin`; docs/wireshark-plugin.md gives the records' grammar.
--
-- It needs nothing outside Wireshark and runs on the Lua of Wireshark 3.6 to 4.6 (5.1, 5.2
-- and 5.4): string patterns only, no goto, no integer division, no bit library.

-- The version of the records this plugin reads; a record of another version is ignored.
local KNOWN_VERSION = "1"

local rocescope = Proto("rocescope", "rocescope analysis")

-- Each key of a record, the field it fills and how its value is read ("uint", "bool" or
-- "string"), in the order the tree shows them.
local KEYS = {
    { "analysis.flow", ProtoField.uint32("rocescope.analysis.flow", "Flow", base.DEC), "uint" },
    { "analysis.seq_class", ProtoField.string("rocescope.analysis.seq_class", "Sequence class"), "string" },
    { "analysis.gap", ProtoField.bool("rocescope.analysis.gap", "Gap", base.NONE), "bool" },
    { "analysis.missing_psns", ProtoField.uint32("rocescope.analysis.missing_psns", "Missing PSNs", base.DEC), "uint" },
    { "analysis.capture_missed", ProtoField.uint32("rocescope.analysis.capture_missed", "PSNs the capture missed", base.DEC), "uint" },
    { "analysis.retransmission", ProtoField.bool("rocescope.analysis.retransmission", "Retransmission", base.NONE), "bool" },
    { "analysis.late_arrival", ProtoField.bool("rocescope.analysis.late_arrival", "Late arrival", base.NONE), "bool" },
    { "analysis.ahead", ProtoField.bool("rocescope.analysis.ahead", "Ahead of late arrivals", base.NONE), "bool" },
    { "analysis.lost_before_tap", ProtoField.bool("rocescope.analysis.lost_before_tap", "Lost before the tap", base.NONE), "bool" },
    { "analysis.mirror_duplicate", ProtoField.bool("rocescope.analysis.mirror_duplicate", "Mirror duplicate", base.NONE), "bool" },
    { "icrc.status", ProtoField.string("rocescope.icrc.status", "ICRC status"), "string" },
    { "vcrc.status", ProtoField.string("rocescope.vcrc.status", "VCRC status"), "string" },
    { "uet.crc.status", ProtoField.string("rocescope.uet.crc.status", "CRC32C"), "string" },
    { "malformed", ProtoField.string("rocescope.malformed", "Malformed"), "string" },
    { "malformed.layer", ProtoField.string("rocescope.malformed.layer", "Malformed at layer"), "string" },
    { "finding", ProtoField.string("rocescope.finding", "Finding"), "string" },
    { "finding.severity", ProtoField.string("rocescope.finding.severity", "Finding severity"), "string" },
}

-- A finding's severity in rocescope and the expert item that shows it: error, warning and
-- info are Wireshark's error, warn and note (rocescope has nothing as light as chat).
local EXPERTS = {
    error = ProtoExpert.new("rocescope.expert.error", "rocescope finding: error", expert.group.PROTOCOL, expert.severity.ERROR),
    warning = ProtoExpert.new("rocescope.expert.warning", "rocescope finding: warning", expert.group.PROTOCOL, expert.severity.WARN),
    info = ProtoExpert.new("rocescope.expert.info", "rocescope finding: info", expert.group.PROTOCOL, expert.severity.NOTE),
}

local fields = {}
for _, key in ipairs(KEYS) do
    fields[#fields + 1] = key[2]
end
rocescope.fields = fields
rocescope.experts = { EXPERTS.error, EXPERTS.warning, EXPERTS.info }

-- The packet comments' field: frame.comment, or pkt_comment where a Wireshark does not know
-- frame.comment; Field.new fails on a name Wireshark does not know, hence the pcall.
local function comment_field()
    for _, name in ipairs({ "frame.comment", "pkt_comment" }) do
        local ok, field = pcall(Field.new, name)
        if ok and field then
            return field
        end
    end
    return nil
end

local comments = comment_field()

-- A value as a record writes it, %XX escapes decoded.
local function unescape(value)
    local decoded = value:gsub("%%(%x%x)", function(hex)
        return string.char(tonumber(hex, 16))
    end)
    return decoded
end

-- A record's header words as a table of key to value; nil unless the line is a record's header
-- of the known version (the second result says whether it is a header of any version).
local function header(line)
    local version, words = line:match("^rocescope/(%d+)(.*)$")
    if not version or (words ~= "" and not words:match("^%s")) then
        return nil, false
    end
    if version ~= KNOWN_VERSION then
        return nil, true
    end
    local values = {}
    for key, value in words:gmatch("%s([%w_%.]+)=(%S*)") do
        values[key] = unescape(value)
    end
    return values, true
end

-- The records of one comment of the known version, each { values = ..., phrase = first phrase
-- line or nil }, appended to `records`.
local function read_records(text, records)
    local current = nil
    for line in (text .. "\n"):gmatch("([^\n]*)\n") do
        line = line:gsub("\r$", "")
        local values, is_header = header(line)
        if is_header then
            current = nil
            if values then
                current = { values = values }
                records[#records + 1] = current
            end
        elseif current and not current.phrase and line ~= "" then
            current.phrase = line
        end
    end
end

-- A record's value of `kind` as its field takes it; nil where it is not one. A boolean is
-- given as the number 1: TreeItem:add has read an FT_BOOLEAN's value as a number in every
-- Wireshark, and as a Lua boolean only in some.
local function typed(value, kind)
    if kind == "bool" then
        if value == "1" then
            return 1
        end
        return nil
    elseif kind == "uint" then
        local number = tonumber(value, 10)
        if number and number >= 0 and number <= 4294967295 and number == math.floor(number) then
            return number
        end
        return nil
    end
    return value
end

-- Adds one record's fields, and its expert item where it is a finding's; `bytes` is the empty
-- range the items stand on (they describe the frame, no bytes of it).
local function add_record(tree, bytes, record)
    for _, key in ipairs(KEYS) do
        local value = record.values[key[1]]
        local typed_value = value and typed(value, key[3])
        if typed_value ~= nil then
            tree:add(key[2], bytes, typed_value)
        end
    end
    local code = record.values["finding"]
    local severity = record.values["finding.severity"]
    local item = severity and EXPERTS[severity]
    if code and item then
        tree:add_proto_expert_info(item, record.phrase or code)
    end
end

function rocescope.dissector(tvb, pinfo, tree)
    if not comments then
        return
    end
    local records = {}
    for _, comment in ipairs({ comments() }) do
        read_records(tostring(comment.value), records)
    end
    if #records == 0 then
        return
    end
    local bytes = tvb:range(0, 0)
    local subtree = tree:add(rocescope, bytes)
    for _, record in ipairs(records) do
        add_record(subtree, bytes, record)
    end
end

register_postdissector(rocescope)
