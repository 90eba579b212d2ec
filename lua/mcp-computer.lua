-- mcp-computer: links this ComputerCraft computer to a cc-mcp-bridge.
--
-- The computer dials out to the bridge's link listener with http.websocket,
-- says hello, then answers the bridge's requests (ping, exec-lua) until the
-- link drops (then it reconnects with backoff) or Ctrl+T is pressed.
--
-- Run "mcp-computer --help" for usage. Everything lives in this one file so
-- it can be copied onto a computer as is.

local VERSION = "0.1.0"

local DEFAULT_MAX_FRAME = 131072 -- CC's default max_websocket_message
local MIN_MAX_FRAME = 1024
local HELLO_TIMEOUT = 5 -- seconds to wait for hello-ok
local BACKOFF_MAX = 30 -- reconnect delays go 1, 2, 4 ... up to this
local STOP_GRACE = 2 -- seconds to let a pending connect settle after Ctrl+T
local MAX_ERROR_BYTES = 2048 -- error messages longer than this are cut
local STARTUP_FILE = "/startup/mcp-computer.lua"
local TLWY = "Too long without yielding"

local colours = colours or colors

-- Thrown (as an error value) to unwind everything when Ctrl+T is pressed.
local STOP = setmetatable({}, { __tostring = function() return "mcp-computer stopped" end })
-- Thrown to end the program with an error status after the reason was printed.
local FATAL = setmetatable({}, { __tostring = function() return "mcp-computer failed" end })

---------------------------------------------------------------------------
-- Screen output
---------------------------------------------------------------------------

-- Background mode (--background): nothing is printed over the player's
-- screen; every line goes to a bounded, rotated log file and, when one is
-- named, to a monitor. `status` and `stop` talk to the link through events.
local LOG_FILE = "/.mcp-computer.log"
local LOG_MAX = 16384 -- bytes in the log before it is rotated to .log.1
local STATUS_EVENT, STATUS_REPLY = "mcp_computer_status", "mcp_computer_status_reply"
local STOP_EVENT, STOPPED_EVENT = "mcp_computer_stop", "mcp_computer_stopped"
local screenPrint, screenPrintError = print, printError
local background = nil -- { logSize = n, monitor = peripheral or nil } in background mode

local function readAll(path)
    if not fs.exists(path) or fs.isDir(path) then return nil end
    local f = fs.open(path, "r")
    if not f then return nil end
    local text = f.readAll() or ""
    f.close()
    return text
end

local function logLine(text)
    local bg = background
    if bg.logSize == nil then bg.logSize = #(readAll(LOG_FILE) or "") end
    local line = ("[%.1f] %s\n"):format(os.clock(), text)
    if bg.logSize + #line > LOG_MAX then
        -- Rotate: the current log becomes .1 (the older .1 is dropped).
        local old = readAll(LOG_FILE) or ""
        local f = fs.open(LOG_FILE .. ".1", "w")
        if f then f.write(old) f.close() end
        fs.delete(LOG_FILE)
        bg.logSize = 0
    end
    local f = fs.open(LOG_FILE, "a")
    if f then
        f.write(line)
        f.close()
        bg.logSize = bg.logSize + #line
    end
    if bg.monitor then
        local ok = pcall(function()
            local previous = term.redirect(bg.monitor)
            screenPrint(text)
            term.redirect(previous)
        end)
        if not ok then bg.monitor = nil end
    end
end

local function joinArgs(...)
    local parts = table.pack(...)
    for i = 1, parts.n do parts[i] = tostring(parts[i]) end
    return table.concat(parts, " ", 1, parts.n)
end

local function print(...)
    if background then return logLine(joinArgs(...)) end
    return screenPrint(...)
end

local function printError(...)
    if background then return logLine("error: " .. joinArgs(...)) end
    return screenPrintError(...)
end

local function printIn(colour, text)
    if background then
        print(text)
    elseif term.isColour() then
        local old = term.getTextColour()
        term.setTextColour(colour)
        print(text)
        term.setTextColour(old)
    else
        print(text)
    end
end

local function warn(text)
    printIn(colours.yellow, "warning: " .. text)
end

local function shorten(text, n)
    text = tostring(text):gsub("[%c]", " ")
    if #text > n then return text:sub(1, n - 3) .. "..." end
    return text
end

---------------------------------------------------------------------------
-- JSON encoding
--
-- Frames are encoded here rather than with textutils.serializeJSON: CC's
-- encoder writes nan/inf as bare words (invalid JSON), escapes every byte
-- >= 0x80 as its own \u00XX unless unicode_strings is set (that option only
-- exists since CC:T 1.106, fails on strings that are not valid UTF-8, and
-- builds strings character by character, which is too slow for big output).
-- This encoder emits ASCII-only JSON: UTF-8 text becomes \uXXXX escapes of
-- its code points, so it arrives as real Unicode on every CC version.
---------------------------------------------------------------------------

-- Pacing (issue 14, finding 2). CC stops a computer that runs about 7 s
-- after it was resumed for an event without yielding (TimeoutState), and
-- shuts it down 1.5 s later. An exec-lua answer is built in a coroutine of
-- its own (see finishChunk); while it runs, pace() yields once the current
-- resume has used SLICE seconds, and the main loop resumes it for a
-- PACE_EVENT it queued, so other events are served in between. pace() is
-- only called where a yield is legal (never inside gsub or sort callbacks).
local SLICE = 0.25
local PACE_EVENT = "mcp_computer_pace"
local PACE = {} -- yielded by pace()
local pacer = nil -- { start = os.clock() of this resume, n = calls } inside an answer's coroutine

local function pace()
    local p = pacer
    if not p then return end
    p.n = p.n + 1
    if p.n < 4 then return end
    p.n = 0
    if os.clock() - p.start >= SLICE then coroutine.yield(PACE) end
end

local ARRAY = {} -- metatable marking tables to encode as JSON arrays
local NULL = setmetatable({}, { __tostring = function() return "null" end })

local function array(list)
    return setmetatable(list, ARRAY)
end

local ESCAPES = {
    ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
    ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
}

local function escapeAscii(c)
    return ESCAPES[c] or string.format("\\u%04x", c:byte())
end

local function codePointEscape(cp)
    if cp < 0x10000 then return string.format("\\u%04x", cp) end
    local v = cp - 0x10000 -- outside the BMP: a UTF-16 surrogate pair
    return string.format("\\u%04x\\u%04x", 0xD800 + math.floor(v / 1024), 0xDC00 + v % 1024)
end

local function isCont(b)
    return b ~= nil and b >= 0x80 and b <= 0xBF
end

-- Decodes one character starting at byte i of s (all bytes >= 0x80 here).
-- Returns its code point and length. Bytes that are not UTF-8 are taken as
-- the character with that byte value (the way CC's own JSON encoder reads
-- them), so Latin-1 text or CC's box-drawing bytes survive readably.
local function decodeChar(s, i)
    local b1, b2, b3, b4 = s:byte(i, i + 3)
    if b1 >= 0xC2 and b1 <= 0xDF and isCont(b2) then
        return (b1 - 0xC0) * 64 + (b2 - 0x80), 2
    elseif b1 >= 0xE0 and b1 <= 0xEF and isCont(b2) and isCont(b3) and (b1 ~= 0xE0 or b2 >= 0xA0) then
        local cp = (b1 - 0xE0) * 4096 + (b2 - 0x80) * 64 + (b3 - 0x80)
        if cp >= 0xD800 and cp <= 0xDBFF then
            -- CC's JSON decoder turns an escaped surrogate pair into two
            -- 3-byte sequences; join them back into one character.
            local c1, c2, c3 = s:byte(i + 3, i + 5)
            if c1 == 0xED and c2 and c2 >= 0xB0 and c2 <= 0xBF and isCont(c3) then
                local low = 0xD000 + (c2 - 0x80) * 64 + (c3 - 0x80)
                return 0x10000 + (cp - 0xD800) * 1024 + (low - 0xDC00), 6
            end
            return 0xFFFD, 3
        elseif cp >= 0xDC00 and cp <= 0xDFFF then
            return 0xFFFD, 3
        end
        return cp, 3
    elseif b1 >= 0xF0 and b1 <= 0xF4 and isCont(b2) and isCont(b3) and isCont(b4)
        and (b1 ~= 0xF0 or b2 >= 0x90) and (b1 ~= 0xF4 or b2 <= 0x8F) then
        return (b1 - 0xF0) * 262144 + (b2 - 0x80) * 4096 + (b3 - 0x80) * 64 + (b4 - 0x80), 4
    end
    return b1, 1
end

local function escapeHighRun(run)
    local out, n, i = {}, 0, 1
    while i <= #run do
        local cp, len = decodeChar(run, i)
        n = n + 1
        out[n] = codePointEscape(cp)
        i = i + len
    end
    return table.concat(out)
end

local function escapePiece(s)
    s = s:gsub('[%c"\\]', escapeAscii)
    return (s:gsub("[\128-\255]+", escapeHighRun))
end

-- Where to end a piece of s that should end near byte j: never inside a
-- UTF-8 character, nor between the halves of a joined surrogate pair.
local function pieceEnd(s, i, j)
    if j >= #s then return #s end
    local k = j
    while k > i and isCont(s:byte(k + 1)) and k > j - 3 do k = k - 1 end
    if s:byte(k + 1) == 0xED and k - 2 >= i and s:byte(k - 2) == 0xED then k = k - 3 end
    if k < i then return j end
    return k
end

local PIECE = 8192 -- bytes escaped at a time, so long strings can be paced

local function encodeString(s)
    if not s:find('[%c"\\\128-\255]') then return '"' .. s .. '"' end
    if #s <= PIECE then return '"' .. escapePiece(s) .. '"' end
    local parts, i = {}, 1
    while i <= #s do
        local j = pieceEnd(s, i, i + PIECE - 1)
        parts[#parts + 1] = escapePiece(s:sub(i, j))
        i = j + 1
        pace()
    end
    return '"' .. table.concat(parts) .. '"'
end

local function isFinite(n)
    return n == n and n ~= math.huge and n ~= -math.huge
end

local function formatNumber(n)
    if n == math.floor(n) and n >= -2 ^ 53 and n <= 2 ^ 53 then
        return string.format("%d", n)
    end
    local s = tostring(n)
    if tonumber(s) ~= n then s = string.format("%.17g", n) end
    return s
end

local encodeInto

local function encodeTable(t, out)
    if getmetatable(t) == ARRAY then
        out[#out + 1] = "["
        for i = 1, #t do
            if i > 1 then out[#out + 1] = "," end
            encodeInto(t[i], out)
            pace()
        end
        out[#out + 1] = "]"
        return
    end
    -- Sorted keys keep frames deterministic (and easy to read in logs).
    local keys = {}
    for k in pairs(t) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    out[#out + 1] = "{"
    for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = encodeString(k)
        out[#out + 1] = ":"
        encodeInto(t[k], out)
        pace()
    end
    out[#out + 1] = "}"
end

encodeInto = function(v, out)
    local tv = type(v)
    if v == nil or v == NULL then
        out[#out + 1] = "null"
    elseif tv == "string" then
        out[#out + 1] = encodeString(v)
    elseif tv == "number" then
        -- Values are described before they get here; this is a last guard.
        out[#out + 1] = isFinite(v) and formatNumber(v) or "null"
    elseif tv == "boolean" then
        out[#out + 1] = tostring(v)
    elseif tv == "table" then
        encodeTable(v, out)
    else
        out[#out + 1] = encodeString(tostring(v))
    end
end

local function encode(v)
    local out = {}
    encodeInto(v, out)
    return table.concat(out)
end

-- Longest prefix of s whose JSON string encoding fits in maxLen bytes,
-- cut at a character boundary.
local function cutToEncoded(s, maxLen)
    if maxLen < 2 then return "" end
    -- Every byte encodes to at least one: what lies past maxLen never fits.
    if #s > maxLen then s = s:sub(1, pieceEnd(s, 1, maxLen)) end
    local size = #encodeString(s)
    if size <= maxLen then return s end
    local len = math.floor(#s * maxLen / size)
    while len > 0 do
        for _ = 1, 3 do
            if isCont(s:byte(len + 1)) then len = len - 1 end
        end
        local cut = s:sub(1, len)
        size = #encodeString(cut)
        if size <= maxLen then return cut end
        len = math.min(len - 1, math.floor(len * maxLen / size))
    end
    return ""
end

---------------------------------------------------------------------------
-- Describing returned values
---------------------------------------------------------------------------

-- Limits for copying a returned table, tried in order until the answer fits.
local TABLE_LIMITS = {
    { depth = 16, items = 10000 },
    { depth = 8, items = 1000, str = 4096 },
    { depth = 4, items = 100, str = 256 },
    { depth = 2, items = 16, str = 64 },
}

local function nonFiniteRepr(n)
    if n ~= n then return "nan" end
    return n > 0 and "inf" or "-inf"
end

local function keyString(k)
    local tk = type(k)
    if tk == "string" then return k end
    if tk == "number" then
        return isFinite(k) and formatNumber(k) or nonFiniteRepr(k)
    end
    return tostring(k)
end

local copyValue

-- Byte strings (issue 14, finding 4). A returned string that is not valid
-- UTF-8 is sent as base64 in its descriptor ({type = "string", base64 = ...})
-- so its bytes come back exactly; text goes as JSON text as before.
local UTF8_SEQUENCES = { -- every well-formed sequence (RFC 3629), by lead byte
    "[\194-\223][\128-\191]",
    "\224[\160-\191][\128-\191]",
    "[\225-\236\238\239][\128-\191][\128-\191]",
    "\237[\128-\159][\128-\191]",
    "\240[\144-\191][\128-\191][\128-\191]",
    "[\241-\243][\128-\191][\128-\191][\128-\191]",
    "\244[\128-\143][\128-\191][\128-\191]",
}

-- The lead bytes of the patterns are disjoint, and each sequence found is
-- replaced by an ASCII byte, so no new sequence can form between the passes.
local function isUtf8(s)
    if not s:find("[\128-\255]") then return true end
    for _, pattern in ipairs(UTF8_SEQUENCES) do s = s:gsub(pattern, "u") end
    return not s:find("[\128-\255]")
end

local B64 = {}
for i = 0, 63 do
    B64[i] = ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"):sub(i + 1, i + 1)
end

local function base64Group(g)
    local b1, b2, b3 = g:byte(1, 3)
    local n = b1 * 65536 + (b2 or 0) * 256 + (b3 or 0)
    local c1, c2 = B64[math.floor(n / 262144)], B64[math.floor(n / 4096) % 64]
    if not b2 then return c1 .. c2 .. "==" end
    local c3 = B64[math.floor(n / 64) % 64]
    if not b3 then return c1 .. c2 .. c3 .. "=" end
    return c1 .. c2 .. c3 .. B64[n % 64]
end

local function base64(s)
    local parts = {}
    for i = 1, #s, 3072 do
        parts[#parts + 1] = (s:sub(i, i + 3071):gsub("..?.?", base64Group))
        pace()
    end
    return table.concat(parts)
end

-- Byte strings inside a returned table (issue 14, finding 4). JSON has no
-- bytes, so such a string, as a value or as a key and at any depth, is
-- written in the table's copy as the body of a Lua string literal (byteText:
-- printable ASCII and UTF-8 characters as they are, every other byte as
-- \ddd, the way the bridge shows a top-level byte string), and the table's
-- descriptor lists its exact bytes: bytes = { { path = ..., base64 = ... } },
-- path being the keys (and 0-based array positions) from the copy's root
-- down to it, with key = true when it is the last key of path itself.
local LITERAL_ESCAPES = { ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r", ['"'] = '\\"', ["\\"] = "\\\\" }

local function escapeLiteralAscii(c)
    return LITERAL_ESCAPES[c] or string.format("\\%03d", c:byte())
end

-- Length of the well-formed UTF-8 sequence (RFC 3629) at byte i of s, or 0.
local function utf8Length(s, i)
    local b1, b2, b3, b4 = s:byte(i, i + 3)
    local lo, hi = 0x80, 0xBF
    if b1 >= 0xC2 and b1 <= 0xDF then return isCont(b2) and 2 or 0 end
    if b1 >= 0xE0 and b1 <= 0xEF then
        if b1 == 0xE0 then lo = 0xA0 elseif b1 == 0xED then hi = 0x9F end
        return (b2 and b2 >= lo and b2 <= hi and isCont(b3)) and 3 or 0
    end
    if b1 >= 0xF0 and b1 <= 0xF4 then
        if b1 == 0xF0 then lo = 0x90 elseif b1 == 0xF4 then hi = 0x8F end
        return (b2 and b2 >= lo and b2 <= hi and isCont(b3) and isCont(b4)) and 4 or 0
    end
    return 0
end

local function literalHighRun(run)
    local out, i = {}, 1
    while i <= #run do
        local len = utf8Length(run, i)
        if len > 0 then
            out[#out + 1] = run:sub(i, i + len - 1)
            i = i + len
        else
            out[#out + 1] = "\\" .. run:byte(i)
            i = i + 1
        end
    end
    return table.concat(out)
end

local function literalPiece(s)
    s = s:gsub('[\0-\31\127"\\]', escapeLiteralAscii)
    return (s:gsub("[\128-\255]+", literalHighRun))
end

local function byteText(s)
    local parts, i = {}, 1
    while i <= #s do
        local j = pieceEnd(s, i, i + 3071)
        parts[#parts + 1] = literalPiece(s:sub(i, j))
        i = j + 1
        pace()
    end
    return table.concat(parts)
end

-- The list of a byte string's exact bytes at the copy's current keys.
local function noteBytes(st, s, lastKey)
    local path = {}
    for i = 1, #st.keys do path[i] = st.keys[i] end
    local entry = { path = array(path), base64 = base64(s) }
    if lastKey ~= nil then
        path[#path + 1] = lastKey
        entry.key = true
    end
    st.bytesList[#st.bytesList + 1] = entry
    st.bytes = st.bytes + #entry.base64 + 8 * #path + 40
    return entry
end

-- A string descriptor for v in about cap bytes.
local function describeString(v, cap)
    local head = #v > cap and v:sub(1, pieceEnd(v, 1, cap)) or v
    if isUtf8(head) then
        if #v > cap then
            return { type = "string", value = cutToEncoded(v, math.max(cap, 2)), truncated = true }, cap + 48, true
        end
        return { type = "string", value = v }, #v + 32
    end
    local most = math.floor(math.max(cap, 4) / 4) * 3
    if #v > most then
        return { type = "string", base64 = base64(v:sub(1, most)), truncated = true }, cap + 48, true
    end
    return { type = "string", base64 = base64(v) }, math.ceil(#v / 3) * 4 + 32
end

-- True when the copy may take no more: st.cap is a byte budget, counted
-- in raw bytes (a lower bound of their JSON size) so nothing big is ever
-- encoded only to be cut afterwards.
local function full(lim, st)
    if st.items >= lim.items or st.bytes >= st.cap then
        st.truncated = true
        if st.bytes >= st.cap then st.capped = true end
        return true
    end
    return false
end

local function copyTable(t, lim, st, depth)
    if st.path[t] then return "<cycle>" end
    if st.seen[t] then return "<repeated>" end
    if depth > lim.depth then
        st.truncated = true
        return "<depth limit>"
    end
    st.seen[t], st.path[t] = true, true

    -- Tables whose keys are (mostly dense) 1..n stay arrays.
    local count, maxIndex, onlyIndexes = 0, 0, true
    for k in next, t do
        count = count + 1
        if count % 256 == 0 then pace() end
        if type(k) == "number" and k >= 1 and k == math.floor(k) then
            if k > maxIndex then maxIndex = k end
        else
            onlyIndexes = false
        end
    end

    local out
    if count > 0 and onlyIndexes and maxIndex <= count * 2 then
        out = array({})
        for i = 1, maxIndex do
            if full(lim, st) then break end
            st.items, st.bytes = st.items + 1, st.bytes + 2
            st.keys[#st.keys + 1] = i - 1
            out[i] = copyValue(rawget(t, i), lim, st, depth + 1)
            st.keys[#st.keys] = nil
            pace()
        end
    else
        out = {}
        for k, v in next, t do
            if full(lim, st) then break end
            local key = keyString(k)
            local byteKey = type(k) == "string" and not isUtf8(k)
            if byteKey then key = byteText(k) end
            st.items, st.bytes = st.items + 1, st.bytes + #key + 4
            if out[key] ~= nil then key = key .. " (" .. type(k) .. " key)" end
            if byteKey then noteBytes(st, k, key) end
            st.keys[#st.keys + 1] = key
            out[key] = copyValue(v, lim, st, depth + 1)
            st.keys[#st.keys] = nil
            pace()
        end
    end
    st.path[t] = nil
    return out
end

copyValue = function(v, lim, st, depth)
    local tv = type(v)
    if tv == "string" then
        local most = math.max(st.cap - st.bytes, 2)
        if lim.str and lim.str < most then most = lim.str end
        if not isUtf8(#v > most and v:sub(1, pieceEnd(v, 1, most)) or v) then
            -- A byte costs up to 5 bytes in the copy (\ddd) and 4/3 in base64.
            local room = math.max(math.floor(most / 7), 1)
            local cut = #v > room
            if cut then
                st.truncated = true
                if most ~= lim.str then st.capped = true end
                v = v:sub(1, room)
            end
            local text = byteText(v)
            if cut then noteBytes(st, v).truncated = true else noteBytes(st, v) end
            st.bytes = st.bytes + #text
            return text
        end
        if #v > most then
            st.truncated = true
            if most ~= lim.str then st.capped = true end
            v = cutToEncoded(v, most)
        end
        st.bytes = st.bytes + #v
        return v
    end
    st.bytes = st.bytes + 6
    if tv == "nil" then return NULL end
    if tv == "number" then return isFinite(v) and v or nonFiniteRepr(v) end
    if tv == "boolean" then return v end
    if tv == "table" then return copyTable(v, lim, st, depth) end
    return tostring(v)
end

-- Describes one returned value in about `cap` bytes at most (raw bytes,
-- counted before encoding). Returns the descriptor, its estimated size and
-- whether the cap (not a table limit) cut it.
local function describe(v, lim, cap)
    cap = cap or math.huge
    local tv = type(v)
    if tv == "nil" then return { type = "nil" }, 16 end
    if tv == "boolean" then return { type = tv, value = v }, 32 end
    if tv == "string" then return describeString(v, cap) end
    if tv == "number" then
        if isFinite(v) then return { type = "number", value = v }, 48 end
        return { type = "number", repr = nonFiniteRepr(v) }, 48
    end
    if tv == "table" then
        local st = { path = {}, seen = {}, keys = {}, bytesList = {}, items = 0, bytes = 0, cap = cap, truncated = false }
        local d = { type = "table", value = copyTable(v, lim or TABLE_LIMITS[1], st, 1) }
        if st.truncated then d.truncated = true end
        if #st.bytesList > 0 then d.bytes = array(st.bytesList) end
        return d, st.bytes + 48, st.capped
    end
    return { type = tv, repr = tostring(v) }, 64
end

-- Shrinks one descriptor (a string or table) so it encodes in room bytes.
local function shrinkDescriptor(v, d, room)
    if d.type == "string" and d.base64 then
        local overhead = #encode({ type = "string", base64 = "", truncated = true })
        return { type = "string", base64 = base64(v:sub(1, math.max(0, math.floor((room - overhead) / 4) * 3))), truncated = true }
    elseif d.type == "string" then
        local overhead = #encode({ type = "string", value = "", truncated = true })
        return { type = "string", value = cutToEncoded(v, room - overhead), truncated = true }
    end
    for i = 2, #TABLE_LIMITS do
        local smaller = describe(v, TABLE_LIMITS[i], room)
        smaller.truncated = true
        if #encode(smaller) <= room then return smaller end
    end
    return d
end

-- Fits the descriptors of values into budget bytes (as a JSON array),
-- keeping one descriptor per value for as long as that is possible.
local function fitReturns(values, descs, budget)
    local n = #descs
    local minimal, minSize, reserve = {}, {}, 0
    for i = 1, n do
        pace()
        local d = descs[i]
        if d.type == "string" or d.type == "table" then
            minimal[i] = { type = d.type, truncated = true }
        else
            minimal[i] = d
        end
        minSize[i] = #encode(minimal[i]) + 1
        reserve = reserve + minSize[i]
    end

    local out, used = {}, 2
    for i = 1, n do
        pace()
        reserve = reserve - minSize[i]
        local room = budget - used - reserve - 1
        local d = descs[i]
        local size = #encode(d)
        if size > room and d ~= minimal[i] then
            d = shrinkDescriptor(values[i], d, room)
            size = #encode(d)
        end
        if size > room then
            d = minimal[i]
            size = #encode(d)
        end
        if used + size + 1 > budget then break end
        out[#out + 1] = d
        used = used + size + 1
    end
    return out
end

---------------------------------------------------------------------------
-- Output capture: a terminal that records what would have been shown
---------------------------------------------------------------------------

-- Text is rebuilt line by line: the row under the cursor is kept as a
-- string, and it is finished with "\n" whenever the cursor moves to
-- another row (print, scroll, setCursorPos), so the result reads like the
-- screen would. At most `limit` bytes are kept.
local function newCapture(limit)
    local base = term.current()
    local w, h = base.getSize()
    local colour = base.isColour()
    local parts, bytes, row = {}, 0, ""
    local x, y = 1, 1
    local fg, bg, blink = colours.white, colours.black, false
    local palette = {}
    local cap = { truncated = false }

    local function add(s)
        local room = limit - bytes
        if #s > room then
            s = s:sub(1, math.max(0, room))
            cap.truncated = true
        end
        if s ~= "" then
            parts[#parts + 1] = s
            bytes = bytes + #s
        end
    end

    local function breakLine(count)
        add(row .. string.rep("\n", count or 1))
        row = ""
    end

    local function put(text)
        local width = #text
        local col = x
        if col < 1 then
            text = text:sub(2 - col)
            col = 1
        end
        if bytes + col + #text > limit then
            cap.truncated = true
            text = text:sub(1, math.max(0, limit - bytes - col))
        end
        local gap = col - #row - 1
        if gap > 0 then row = row .. string.rep(" ", math.min(gap, 256)) end
        row = row:sub(1, col - 1) .. text .. row:sub(col + #text)
        x = x + width
    end

    local t = {}
    -- Like CC's term.write, any value is written as text (nil as "nil").
    function t.write(text)
        put(tostring(text))
    end
    function t.blit(text, tfg, tbg)
        if #text ~= #tfg or #text ~= #tbg then error("Arguments must be the same length", 2) end
        put(text)
    end
    function t.clear()
        if row ~= "" then breakLine() end
    end
    function t.clearLine()
        row = ""
    end
    function t.getCursorPos() return x, y end
    function t.setCursorPos(nx, ny)
        nx, ny = math.floor(nx), math.floor(ny)
        if ny > y then
            breakLine(math.min(ny - y, h))
        elseif ny < y and row ~= "" then
            breakLine()
        end
        x, y = nx, ny
    end
    function t.scroll(n)
        if n > 0 then
            breakLine(math.min(n, h))
        elseif n < 0 and row ~= "" then
            breakLine()
        end
    end
    function t.getSize() return w, h end
    function t.isColour() return colour end
    function t.setCursorBlink(b) blink = b end
    function t.getCursorBlink() return blink end
    function t.setTextColour(c) fg = c end
    function t.getTextColour() return fg end
    function t.setBackgroundColour(c) bg = c end
    function t.getBackgroundColour() return bg end
    -- Palette changes stay inside the capture; the real screen is untouched.
    function t.setPaletteColour(c, r, g, b)
        if g == nil and type(r) == "number" then
            r, g, b = math.floor(r / 65536) % 256 / 255, math.floor(r / 256) % 256 / 255, r % 256 / 255
        end
        palette[c] = { r, g, b }
    end
    function t.getPaletteColour(c)
        local p = palette[c]
        if p then return p[1], p[2], p[3] end
        if base.getPaletteColour then return base.getPaletteColour(c) end
        return 0, 0, 0
    end
    if term.nativePaletteColour then
        function t.nativePaletteColour(c) return term.nativePaletteColour(c) end
    end
    t.isColor, t.setTextColor, t.getTextColor = t.isColour, t.setTextColour, t.getTextColour
    t.setBackgroundColor, t.getBackgroundColor = t.setBackgroundColour, t.getBackgroundColour
    t.setPaletteColor, t.getPaletteColor = t.setPaletteColour, t.getPaletteColour
    t.nativePaletteColor = t.nativePaletteColour
    -- Anything else this terminal offers (a window's redraw, an emulator's
    -- extras) goes to the real one, so term.redirect finds no missing method.
    for k, v in pairs(base) do
        if t[k] == nil and type(v) == "function" then t[k] = v end
    end

    cap.target = t
    function cap.text()
        return table.concat(parts) .. row
    end
    -- The finished lines so far, handed over and forgotten (detached jobs).
    function cap.take()
        local s = table.concat(parts)
        parts = {}
        return s
    end
    return cap
end

---------------------------------------------------------------------------
-- The link
---------------------------------------------------------------------------

local function frameBudget(maxFrame)
    -- Leave a margin below the limit (4 KiB by default).
    return maxFrame - math.min(4096, math.floor(maxFrame / 8))
end

local function labelOf()
    local label = os.getComputerLabel()
    if type(label) ~= "string" or label == "" then return nil end
    return label
end

local function pongText()
    return ("pong from %d (Label: %s)"):format(os.getComputerID(), labelOf() or "null")
end

local function isLinkEvent(link, ev)
    local name = ev[1]
    return ev[2] == link.url and (name == "websocket_message" or name == "websocket_closed"
        or name == "websocket_success" or name == "websocket_failure")
end

-- Sends an encoded frame. A frame CC refuses as too large is replaced by
-- the smaller one from `fallback` so that an answer is never lost.
local function sendJson(link, json, fallback)
    local ws = link.ws
    if not ws then return false end
    local ok, err = pcall(ws.send, json)
    if ok then return true end
    err = tostring(err)
    if fallback and err:find("too large", 1, true) then
        ok, err = pcall(ws.send, fallback(#json))
        if ok then return true end
        err = tostring(err)
    end
    link.lost = link.lost or ("could not send: " .. err)
    return false
end

local function respond(link, id, ok, result, err)
    local frame = { type = "response", id = id, ok = ok }
    if ok then frame.result = result else frame.error = err end
    return sendJson(link, encode(frame))
end

---------------------------------------------------------------------------
-- Identity (lua-files): what this computer is, in the hello; a change of
-- its label or peripherals is sent as an "info" frame (no new hello).
---------------------------------------------------------------------------

local identity = {}
identity.MAX_PERIPHERALS = 256 -- more are left out of the frames
identity.CHECK_EVERY = 2 -- seconds between label checks when idle

function identity.kind()
    if turtle then return "turtle" end
    if pocket then return "pocket" end
    if commands then return "command" end
    return "computer"
end

function identity.advanced()
    local ok, colour = pcall(function()
        local t = term.native and term.native() or term
        return t.isColour()
    end)
    return ok and colour == true
end

function identity.ccVersion()
    local v = type(_HOST) == "string" and _HOST:match("ComputerCraft ([%w%.%-]+)")
    if v then return v end
    if type(_CC_VERSION) == "string" then return _CC_VERSION end
    return nil
end

function identity.peripherals()
    local list = {}
    if not (peripheral and peripheral.getNames) then return array(list) end
    local names = peripheral.getNames()
    table.sort(names)
    for _, name in ipairs(names) do
        if #list >= identity.MAX_PERIPHERALS then break end
        local types = { peripheral.getType(name) }
        for i = #types, 1, -1 do if type(types[i]) ~= "string" then table.remove(types, i) end end
        list[#list + 1] = { name = name, types = array(types) }
    end
    return array(list)
end

-- The hello's identity fields, added to `frame`.
function identity.fill(frame)
    frame.kind = identity.kind()
    frame.advanced = identity.advanced()
    if type(_HOST) == "string" then frame.host = _HOST end
    frame.ccVersion = identity.ccVersion()
    frame.peripherals = identity.peripherals()
    return frame
end

-- Sends an info frame when the label or peripherals changed since the
-- last one (or the hello); called for every event while linked.
function identity.watch(link, ev)
    local now = os.clock()
    local name = ev[1]
    local due = name == "peripheral" or name == "peripheral_detach" or (name == "timer" and ev[2] == link.identityTimer)
    if name == "timer" and ev[2] == link.identityTimer then link.identityTimer = os.startTimer(identity.CHECK_EVERY) end
    if not due and now - (link.identityChecked or 0) < 1 then return end
    link.identityChecked = now
    local label = labelOf()
    local peripherals = (due and name ~= "timer") and encode(identity.peripherals()) or link.sentPeripherals
    if label == link.sentLabel and peripherals == link.sentPeripherals then return end
    link.sentLabel, link.sentPeripherals = label, peripherals
    sendJson(link, '{"type":"info","computerLabel":' .. encode(label == nil and NULL or label) .. ',"peripherals":' .. peripherals .. '}')
end

local function cutError(err)
    if #err > MAX_ERROR_BYTES then return cutToEncoded(err, MAX_ERROR_BYTES) .. "..." end
    return err
end

-- Builds the exec-lua response frame, cutting output and returned values so
-- the encoded frame stays within the link's budget.
-- Sizes are capped before anything is encoded (issue 14, finding 2): no
-- value is described past the room a frame has, and the parts are measured
-- before they are joined, so no frame over the budget is ever built.
local function execFrame(link, id, ok, err, output, outputTruncated, values)
    local budget = frameBudget(link.maxFrame)
    local f = { type = "response", id = id, ok = ok }
    if not ok then f.error = err end
    local tail = "}," .. encode(f):sub(2)
    local function frame(outJson, retJson, truncated)
        return '{"result":{"output":' .. outJson .. ',"returns":' .. retJson
            .. ',"truncated":' .. tostring(truncated) .. tail
    end
    -- Bytes left for the encoded output and returned values together.
    local avail = budget - #frame('""', "[]", false) - 1

    -- Each descriptor takes at least 15 bytes ({"type":"nil"},): more
    -- values than that can never be listed.
    local n, truncated = values.n, outputTruncated
    if n > math.floor(avail / 15) then n, truncated = math.max(math.floor(avail / 15), 0), true end
    local descs, room = {}, avail
    for i = 1, n do
        local d, size, capped = describe(values[i], nil, math.max(room, 16))
        descs[i], room = d, room - size
        if capped then truncated = true end
        pace()
    end
    local kept = { n = n }
    for i = 1, n do kept[i] = values[i] end

    local outJson = #output <= avail and encodeString(output) or nil
    local retJson = encode(array(descs))
    if outJson and #outJson + #retJson <= avail then return frame(outJson, retJson, truncated) end

    -- Too big: give the returned values a fair share first, then cut the
    -- output to whatever room is left.
    local outSize = outJson and #outJson or #output
    descs = fitReturns(kept, descs, math.max(avail - outSize, math.floor(avail / 2)))
    retJson = encode(array(descs))
    outJson = encodeString(cutToEncoded(output, avail - #retJson))
    if #outJson + #retJson <= avail then return frame(outJson, retJson, true) end
    return frame('""', "[]", true)
end

local function describeError(err)
    if err == nil then return "error (no message)" end
    if type(err) ~= "string" then
        local ok, s = pcall(tostring, err)
        err = ok and s or ("error object of type " .. type(err))
    end
    if err:find(TLWY, 1, true) then
        return TLWY .. ": the chunk ran for about 7 s without yielding, so CC stopped it"
            .. " (call sleep(0) or os.pullEvent() now and then in long loops)"
    end
    return cutError(err)
end

-- CC's 7 s are shared by everything resumed for one event. When the chunk
-- that got the error used little of them, say so instead of blaming it.
local function describeWatchdog(ran, total)
    if total > 0 and ran < total / 2 then
        return ("%s: CC's limit of about 7 s for one event ran out while this chunk ran, but it"
            .. " ran only %d%% of that time: other exec-lua chunks resumed for the same event"
            .. " used the rest (call sleep(0) or os.pullEvent() now and then in long loops)")
            :format(TLWY, math.floor(ran * 100 / total))
    end
    return describeError(TLWY)
end

-- Runs (or goes on with) building and sending one answer; see pace().
-- Whatever goes wrong in it, the bridge still gets an answer for the id.
local function runAnswer(link, job)
    pacer = { n = 0, start = job.start }
    local ok, res = coroutine.resume(job.co)
    pacer = nil
    if not ok then
        if res == TLWY then link.tripped = true end
        sendJson(link, encode({ type = "response", id = job.id, ok = false,
            error = "could not build the answer: " .. describeError(res),
            result = { output = "", returns = array({}), truncated = true } }))
    elseif coroutine.status(job.co) ~= "dead" then
        link.answers[#link.answers + 1] = job
        os.queueEvent(PACE_EVENT)
    end
end

local function finishChunk(link, chunk, ok, err, values)
    chunk.done = true
    link.chunks[chunk.id] = nil
    if chunk.onFinish then return chunk.onFinish(link, chunk, ok, err, values) end -- detached job
    local id = chunk.id
    local co = coroutine.create(function()
        local output = chunk.capture.text()
        local json = execFrame(link, id, ok, err, output, chunk.capture.truncated, values)
        sendJson(link, json, function(size)
            return encode({ type = "response", id = id, ok = false,
                error = ("the answer (%d bytes) was larger than this server's websocket message limit;"
                    .. " run mcp-computer with a smaller --max-frame"):format(size),
                result = { output = "", returns = array({}), truncated = true } })
        end)
    end)
    -- The time this resume has used already counts (a chunk may have run long).
    runAnswer(link, { co = co, id = id, start = link.resumeStart or os.clock() })
end

local function failExec(link, id, err)
    local frame = { type = "response", id = id, ok = false, error = err,
        result = { output = "", returns = array({}), truncated = false } }
    sendJson(link, encode(frame))
end

-- Resumes a chunk with its output captured; the terminal is restored
-- afterwards whatever happens.
local function noInput()
    error("read() has no input here: an exec-lua chunk gets no keyboard", 2)
end

-- While a chunk runs: no paging (pagedPrint and pagedTabulate would wait for
-- a key at the bottom of the capture, which no one can press) and read()
-- fails at once instead of waiting forever. CC runs nothing else while we
-- do, so the globals are swapped for the resume and put back after it.
local function enterChunk()
    local tu = textutils
    local saved = { read = _G.read, pagedPrint = tu.pagedPrint, pagedTabulate = tu.pagedTabulate }
    _G.read = noInput
    tu.pagedPrint = function(text) return print(text) end
    tu.pagedTabulate = function(...) return tu.tabulate(...) end
    -- io.read goes through the read() io.lua captured when it loaded.
    local stdin = type(io) == "table" and type(io.stdin) == "table" and rawget(io.stdin, "_handle")
    if type(stdin) == "table" then
        saved.stdin, saved.readLine = stdin, stdin.readLine
        stdin.readLine = noInput
    end
    return saved
end

local function leaveChunk(saved)
    _G.read = saved.read
    textutils.pagedPrint, textutils.pagedTabulate = saved.pagedPrint, saved.pagedTabulate
    if saved.stdin then saved.stdin.readLine = saved.readLine end
end

local function stepChunk(link, chunk, ...)
    local saved = enterChunk()
    local previous = term.redirect(chunk.target)
    local args = table.pack(...)
    local started = os.clock()
    local ok, res = pcall(function()
        return table.pack(coroutine.resume(chunk.co, table.unpack(args, 1, args.n)))
    end)
    chunk.target = term.current()
    term.redirect(previous)
    leaveChunk(saved)
    if not ok then res = { false, res, n = 2 } end

    if not res[1] and res[2] == TLWY then
        -- CC throws this once per resume; 1.5 s later it shuts the computer
        -- down. Nothing more may run before the next yield.
        link.tripped = true
        local now = os.clock()
        finishChunk(link, chunk, false, describeWatchdog(now - started, now - (link.eventStart or started)), { n = 0 })
    elseif not res[1] then
        finishChunk(link, chunk, false, describeError(res[2]), { n = 0 })
    elseif coroutine.status(chunk.co) == "dead" then
        finishChunk(link, chunk, true, nil, table.pack(table.unpack(res, 2, res.n)))
    else
        chunk.filter = res[2]
    end
    if chunk.afterStep and not chunk.done then chunk.afterStep(chunk) end
end

---------------------------------------------------------------------------
-- Safe tools, part B (lua-tools): peripherals, programs, screen and
-- keyboard, detached jobs. Fixed Lua; nothing here runs code the bridge
-- sends except a detached exec-lua, which obeys the same exec switch.
---------------------------------------------------------------------------

-- Everything here lives in one table (locals of this chunk are limited to 200).
local B = {}

B.JOB_OUTPUT_MAX = 65536 -- bytes of a job's output kept on the computer (the tail)
B.JOBS_MAX = 16 -- jobs kept (running and finished); the oldest finished go first
B.INPUT_EVENTS_MAX = 200 -- events one send-input may queue (CC's queue holds 256)

-- JSON arrays arrive as tables (an empty one as textutils' read-only
-- marker); returns a plain list and its length.
function B.listArg(v, n)
    if type(v) ~= "table" then return {}, 0 end
    local out = {}
    local count = type(n) == "number" and n or #v
    for i = 1, count do out[i] = v[i] end
    return out, count
end

-- Starts fn as a chunk with its output captured, like an exec-lua chunk;
-- its answer is an exec-lua result (output, returns, truncated).
function B.startFixedChunk(link, id, fn, ...)
    if link.chunks[id] then
        return warn("ignored a request with an id that is already running: " .. shorten(id, 40))
    end
    local capture = newCapture(link.maxFrame)
    local chunk = { id = id, co = coroutine.create(fn), capture = capture, target = capture.target }
    link.chunks[id] = chunk
    link.order[#link.order + 1] = chunk
    stepChunk(link, chunk, ...)
    return chunk
end

-- Peripherals ---------------------------------------------------------------

function B.peripheralTypes(name)
    local types = table.pack(peripheral.getType(name))
    local out = {}
    for i = 1, types.n do
        if types[i] ~= nil then out[#out + 1] = tostring(types[i]) end
    end
    return array(out)
end

function B.listPeripherals()
    if not peripheral then error("this computer has no peripheral API", 0) end
    local names = peripheral.getNames()
    table.sort(names)
    local out = {}
    for i, name in ipairs(names) do
        local methods = peripheral.getMethods(name) or {}
        table.sort(methods)
        out[i] = { name = name, types = B.peripheralTypes(name), methods = array(methods) }
    end
    return { peripherals = array(out) }
end

function B.callPeripheral(link, id, params)
    params = type(params) == "table" and params or {}
    local name, method = params.name, params.method
    if type(name) ~= "string" or type(method) ~= "string" then
        return failExec(link, id, "call-peripheral needs params.name and params.method (strings)")
    end
    if not (peripheral and peripheral.isPresent(name)) then
        return failExec(link, id, "No peripheral named " .. shorten(name, 60) .. " is attached")
    end
    local known = false
    for _, m in ipairs(peripheral.getMethods(name) or {}) do
        if m == method then known = true break end
    end
    if not known then
        return failExec(link, id, ("Peripheral %s has no method %s"):format(shorten(name, 60), shorten(method, 60)))
    end
    local args, n = B.listArg(params.args, params.argCount)
    -- As a chunk: some peripheral methods wait for the main thread, and
    -- the events they pull must not be taken from the link.
    B.startFixedChunk(link, id, function()
        local res = table.pack(pcall(peripheral.call, name, method, table.unpack(args, 1, n)))
        if res[1] then return table.unpack(res, 2, res.n) end
        -- The peripheral's own message, without where in the ROM it was raised.
        error(type(res[2]) == "string" and res[2]:gsub("^/?rom/[^:]+:%d+: ", "") or res[2], 0)
    end)
end

-- Programs ------------------------------------------------------------------

function B.runProgram(link, id, params)
    local command = type(params) == "table" and params.command
    if type(command) ~= "string" or command:find("^%s*$") then
        return failExec(link, id, "run-program needs params.command (a command line)")
    end
    if not (shell and shell.run) then
        return failExec(link, id, "no shell here to run programs with")
    end
    return B.startFixedChunk(link, id, function() return shell.run(command) end)
end

function B.checkLua(_, params)
    local code, name = params.code, params.path
    if type(name) == "string" and code == nil then
        if not fs.exists(name) or fs.isDir(name) then
            error("/" .. fs.combine(name, "") .. ": No such file", 0)
        end
        code = readAll(name)
        name = "/" .. fs.combine(name, "")
    end
    if type(code) ~= "string" then
        error("check-lua needs params.code (Lua source) or params.path (a file)", 0)
    end
    name = type(name) == "string" and name or "code"
    -- Compiled against an empty environment and never run.
    local fn, err = load(code, "=" .. name, "t", {})
    if fn then return { ok = true, errors = array({}) } end
    err = tostring(err)
    local line, message = err:match("^.-:(%d+): (.*)$")
    return { ok = false, errors = array({
        { line = tonumber(line) or NULL, message = cutError(message or err) },
    }) }
end

-- Screen and keyboard -------------------------------------------------------

-- A terminal that passes everything to `parent` and keeps a copy of the
-- cells (text, colours as blit characters), so the player's screen can be
-- read back. The player's shell runs inside it in background mode.
B.BLIT = "0123456789abcdef"

function B.blitOf(c)
    local i = 1
    while c > 1 and i < 16 do c = c / 2 i = i + 1 end
    return B.BLIT:sub(i, i)
end

function B.newMirror(parent)
    local w, h = parent.getSize()
    local rows, fgs, bgs = {}, {}, {}
    local x, y = parent.getCursorPos()
    local fg, bg = B.blitOf(parent.getTextColour()), B.blitOf(parent.getBackgroundColour())
    local function blank(i)
        rows[i], fgs[i], bgs[i] = string.rep(" ", w), string.rep(fg, w), string.rep(bg, w)
    end
    for i = 1, h do
        blank(i)
        -- What is on the screen already, when the parent can say (a window).
        local text, tf, tb = nil, nil, nil
        if parent.getLine then text, tf, tb = parent.getLine(i) end
        if type(text) == "string" and #text == w and #tf == w and #tb == w then rows[i], fgs[i], bgs[i] = text, tf, tb end
    end
    local function put(text, tf, tb)
        if y >= 1 and y <= h and x <= w and x + #text - 1 >= 1 then
            local from = math.max(1, x)
            local to = math.min(w, x + #text - 1)
            local a, b = from - x + 1, to - x + 1
            local function splice(s, part) return s:sub(1, from - 1) .. part .. s:sub(to + 1) end
            rows[y] = splice(rows[y], text:sub(a, b))
            fgs[y] = splice(fgs[y], tf and tf:sub(a, b) or string.rep(fg, b - a + 1))
            bgs[y] = splice(bgs[y], tb and tb:sub(a, b) or string.rep(bg, b - a + 1))
        end
        x = x + #text
    end
    local m = {}
    for k, v in pairs(parent) do
        if type(v) == "function" then m[k] = v end
    end
    function m.write(text)
        text = tostring(text)
        parent.write(text)
        put(text)
    end
    function m.blit(text, tf, tb)
        parent.blit(text, tf, tb)
        put(text, tf:lower(), tb:lower())
    end
    function m.clear()
        parent.clear()
        for i = 1, h do blank(i) end
    end
    function m.clearLine()
        parent.clearLine()
        if y >= 1 and y <= h then blank(y) end
    end
    function m.setCursorPos(nx, ny)
        parent.setCursorPos(nx, ny)
        x, y = math.floor(nx), math.floor(ny)
    end
    function m.getCursorPos() return x, y end
    function m.scroll(n)
        parent.scroll(n)
        n = math.floor(n)
        if n == 0 then return end
        local nr, nf, nb = {}, {}, {}
        for i = 1, h do
            local j = i + n
            if j >= 1 and j <= h then nr[i], nf[i], nb[i] = rows[j], fgs[j], bgs[j] end
        end
        rows, fgs, bgs = nr, nf, nb
        for i = 1, h do if not rows[i] then blank(i) end end
    end
    function m.setTextColour(c)
        parent.setTextColour(c)
        fg = B.blitOf(c)
    end
    function m.setBackgroundColour(c)
        parent.setBackgroundColour(c)
        bg = B.blitOf(c)
    end
    m.setTextColor, m.setBackgroundColor = m.setTextColour, m.setBackgroundColour
    function m.getLine(i)
        if rows[i] then return rows[i], fgs[i], bgs[i] end
    end
    return m
end

function B.noShellToRead()
    if background then
        error("the shell's terminal cannot be read on this computer (its window has no getLine)", 0)
    end
    error("there is no shell to read: mcp-computer runs in the foreground on this"
        .. " computer and owns its screen; run it with --background (what \"mcp-computer startup\" installs)", 0)
end

function B.readScreen()
    local screen = background and background.screen
    if not screen then B.noShellToRead() end
    local w, h = screen.getSize()
    local lines, fgs, bgs = {}, {}, {}
    for i = 1, h do
        local text, tf, tb = screen.getLine(i)
        lines[i], fgs[i], bgs[i] = text or "", tf or "", tb or ""
    end
    local cx, cy = screen.getCursorPos()
    return {
        width = w, height = h, cursorX = cx, cursorY = cy,
        cursorBlink = screen.getCursorBlink and screen.getCursorBlink() or false,
        colour = screen.isColour and screen.isColour() or false,
        lines = array(lines), foreground = array(fgs), background = array(bgs),
    }
end

B.KEY_ALIASES = {
    ctrl = "leftCtrl", control = "leftCtrl", shift = "leftShift", alt = "leftAlt",
    ["return"] = "enter", del = "delete", esc = "escape", pageup = "pageUp", pagedown = "pageDown",
    leftctrl = "leftCtrl", rightctrl = "rightCtrl", leftshift = "leftShift", rightshift = "rightShift",
    leftalt = "leftAlt", rightalt = "rightAlt", capslock = "capsLock", ["space"] = "space",
}

function B.keyCode(name)
    local k = B.KEY_ALIASES[name:lower()] or name
    local code = keys and (keys[k] or keys[k:lower()])
    if type(code) == "number" then return code end
    return nil
end

-- Turns one send-input key ("enter", "up", "ctrl+t", "ctrl+shift+x") into
-- the events CC queues: key (not held) for each key in order, key_up in
-- reverse. ctrl+t is CC's terminate, which the shell gets as such.
function B.keyEvents(spec, out)
    if type(spec) ~= "string" or spec == "" then return "a key is not a non-empty string" end
    local lower = spec:lower()
    if lower == "ctrl+t" then out[#out + 1] = { "terminate" } return end
    if lower == "ctrl+r" or lower == "ctrl+s" then
        return "ctrl+r and ctrl+s reboot and shut down the computer; send-input does not do that"
    end
    local codes, chars = {}, {}
    for part in spec:gmatch("[^+]+") do
        local code = B.keyCode(part)
        if not code then return "unknown key " .. shorten(part, 30) .. " (use names of CC's keys API: enter, backspace, up, leftCtrl, a ...)" end
        codes[#codes + 1] = code
        chars[#chars + 1] = part
    end
    if #codes == 0 then return "a key is not a non-empty string" end
    for _, code in ipairs(codes) do out[#out + 1] = { "key", code, false } end
    -- A single printable key also types its character, as CC does.
    if #codes == 1 and #chars[1] == 1 and chars[1]:find("^[%w%p]$") then out[#out + 1] = { "char", chars[1] } end
    for i = #codes, 1, -1 do out[#out + 1] = { "key_up", codes[i] } end
end

-- Text as char events (CC's charset: a code point above 255 becomes "?");
-- "\n" presses enter.
function B.textEvents(text, out)
    local i = 1
    while i <= #text do
        local c = text:sub(i, i)
        local b = c:byte()
        if c == "\n" then
            out[#out + 1] = { "key", keys and keys.enter or 257, false }
            out[#out + 1] = { "key_up", keys and keys.enter or 257 }
            i = i + 1
        elseif b < 0x80 then
            if b >= 32 and b ~= 127 then out[#out + 1] = { "char", c } end
            if c == "\t" then
                out[#out + 1] = { "key", keys and keys.tab or 258, false }
                out[#out + 1] = { "key_up", keys and keys.tab or 258 }
            end
            i = i + 1
        else
            local cp, len = decodeChar(text, i)
            out[#out + 1] = { "char", cp < 256 and string.char(cp) or "?" }
            i = i + len
        end
    end
end

function B.sendInput(_, params)
    if not (background and background.screen) then B.noShellToRead() end
    local events = {}
    local text = params.text
    if text ~= nil and type(text) ~= "string" then error("params.text must be a string", 0) end
    if text and text ~= "" then
        if params.paste == true then events[1] = { "paste", text } else B.textEvents(text, events) end
    end
    local list, n = B.listArg(params.keys)
    for i = 1, n do
        local problem = B.keyEvents(list[i], events)
        if problem then error(problem, 0) end
    end
    if #events > B.INPUT_EVENTS_MAX then
        error(("that is %d events; at most %d fit CC's event queue at once"
            .. " (send long text with paste, or in parts)"):format(#events, B.INPUT_EVENTS_MAX), 0)
    end
    for _, ev in ipairs(events) do os.queueEvent(table.unpack(ev, 1, 3)) end
    return { queued = #events }
end

-- Detached jobs ---------------------------------------------------------------

-- A job is a chunk (exec-lua or run-program) that answered at once with its
-- id; it keeps running across link drops and reconnects (not a reboot), its
-- output kept here (the last B.JOB_OUTPUT_MAX bytes) for job-status.
function B.jobCount(link)
    local n = 0
    for _ in pairs(link.jobs) do n = n + 1 end
    return n
end

function B.makeRoomForJob(link)
    while B.jobCount(link) >= B.JOBS_MAX do
        local oldest
        for _, job in pairs(link.jobs) do
            if job.state ~= "running" and (not oldest or job.seq < oldest.seq) then oldest = job end
        end
        if not oldest then return false end
        link.jobs[oldest.id] = nil
    end
    return true
end

function B.keepOutput(job, text)
    if text == "" then return end
    job.out = job.out .. text
    job.total = job.total + #text
    if #job.out > B.JOB_OUTPUT_MAX then
        local drop = #job.out - B.JOB_OUTPUT_MAX
        job.out = job.out:sub(drop + 1)
        job.base = job.base + drop
    end
end

function B.jobFinished(link, chunk, ok, err, values)
    local job = chunk.job
    B.keepOutput(job, chunk.capture.take() .. chunk.capture.text())
    if job.state == "running" then job.state = ok and "done" or "failed" end
    job.ok, job.error, job.finished = ok, err, os.clock()
    -- Described now, within a quarter of a frame, the way exec-lua's answer is.
    local budget = math.floor(frameBudget(link.maxFrame) / 4)
    local descs, room = {}, budget
    for i = 1, math.min(values.n, math.floor(budget / 15)) do
        local d, size = describe(values[i], nil, math.max(room, 16))
        descs[i], room = d, room - size
    end
    job.returns = fitReturns(values, descs, budget)
    job.chunk = nil
end

function B.startJob(link, id, kind, what, fn, ...)
    if link.jobs[id] or link.chunks[id] then
        return warn("ignored a detached request with an id already in use: " .. shorten(id, 40))
    end
    if not B.makeRoomForJob(link) then
        return failExec(link, id, ("%d jobs are running on this computer; cancel one (job-cancel) first"):format(B.JOBS_MAX))
    end
    link.jobSeq = (link.jobSeq or 0) + 1
    local job = { id = id, kind = kind, what = what, state = "running", out = "", base = 0, total = 0,
        seq = link.jobSeq, started = os.clock() }
    link.jobs[id] = job
    local capture = newCapture(math.huge)
    local chunk = { id = id, co = coroutine.create(fn), capture = capture, target = capture.target, job = job,
        onFinish = B.jobFinished, afterStep = function(c) B.keepOutput(c.job, c.capture.take()) end }
    job.chunk = chunk
    respond(link, id, true, { job = id, state = "running" })
    link.order[#link.order + 1] = chunk
    stepChunk(link, chunk, ...)
end

function B.detachExec(link, id, params)
    local code = params.code
    if type(code) ~= "string" then return failExec(link, id, "exec-lua needs params.code (a string of Lua)") end
    local env = setmetatable({}, { __index = _ENV or _G })
    local fn, err = load(code, "=exec-lua", "t", env)
    if not fn then return failExec(link, id, cutError(tostring(err))) end
    if type(params.args) == "table" then
        return B.startJob(link, id, "exec-lua", shorten(code, 60), fn, params.args)
    end
    B.startJob(link, id, "exec-lua", shorten(code, 60), fn)
end

function B.detachProgram(link, id, params)
    local command = params.command
    if type(command) ~= "string" or command:find("^%s*$") then
        return failExec(link, id, "run-program needs params.command (a command line)")
    end
    if not (shell and shell.run) then return failExec(link, id, "no shell here to run programs with") end
    B.startJob(link, id, "run-program", shorten(command, 60), function() return shell.run(command) end)
end

function B.jobSummary(job)
    return { job = job.id, kind = job.kind, what = job.what, state = job.state, outputBytes = job.total }
end

function B.jobStatus(link, params)
    local jid = params.job
    if jid == nil then
        local list = {}
        for _, job in pairs(link.jobs) do list[#list + 1] = job end
        table.sort(list, function(a, b) return a.seq < b.seq end)
        for i, job in ipairs(list) do list[i] = B.jobSummary(job) end
        return { jobs = array(list) }
    end
    local job = type(jid) == "string" and link.jobs[jid]
    if not job then
        error("no job " .. shorten(tostring(jid), 60)
            .. " on this computer (jobs do not survive a reboot, and only the last " .. B.JOBS_MAX .. " are kept)", 0)
    end
    local cursor = tonumber(params.cursor) or 0
    if cursor < 0 or cursor ~= math.floor(cursor) then cursor = 0 end
    local skipped = 0
    if cursor < job.base then
        skipped = job.base - cursor
        cursor = job.base
    end
    if cursor > job.total then cursor = job.total end
    local room = math.floor(frameBudget(link.maxFrame) / 2)
    local text = cutToEncoded(job.out:sub(cursor - job.base + 1), room)
    local s = B.jobSummary(job)
    s.output, s.cursor, s.skipped = text, cursor + #text, skipped
    s.more = cursor + #text < job.total
    if job.chunk then
        s.partial = job.chunk.capture.text()
    elseif job.state ~= "running" then
        s.ok, s.returns = job.ok, array(job.returns or {})
        if job.error then s.error = job.error end
    end
    return s
end

function B.jobCancel(link, params)
    local jid = type(params) == "table" and params.job
    local job = type(jid) == "string" and link.jobs[jid]
    if not job then
        error("no job " .. shorten(tostring(jid), 60) .. " on this computer", 0)
    end
    if job.state == "running" then
        local chunk = job.chunk
        if chunk then
            chunk.done = true
            B.keepOutput(job, chunk.capture.take() .. chunk.capture.text())
        end
        job.state, job.ok, job.error, job.chunk = "cancelled", false, "cancelled by job-cancel", nil
        print("cancelled job " .. shorten(jid, 12))
    end
    return B.jobSummary(job)
end

-- After a relink: the jobs that kept running meanwhile (job-status lists them).
function B.reportJobs(link)
    local n = 0
    for _, job in pairs(link.jobs) do
        if job.state == "running" then n = n + 1 end
    end
    if n > 0 then print(("%d detached job(s) still running; job-status lists them"):format(n)) end
end

-- Job chunks outlive the link: kept when it drops.
function B.jobChunks(link)
    local keep = {}
    for _, chunk in ipairs(link.order) do
        if chunk.job and not chunk.done then keep[#keep + 1] = chunk end
    end
    return keep
end

-- The methods of part B, by link method name.
function B.runOrDetach(link, id, params)
    if type(params) == "table" and params.detach == true then return B.detachProgram(link, id, params) end
    return B.runProgram(link, id, params)
end

local function execEnabled(link)
    return link.exec and settings.get("mcp.exec") ~= false
end

local function startExec(link, id, params)
    if not execEnabled(link) then
        return failExec(link, id, "exec-lua is disabled on this computer")
    end
    if type(params) == "table" and params.detach == true then return B.detachExec(link, id, params) end
    if link.chunks[id] then
        return warn("ignored exec-lua with an id that is already running: " .. shorten(id, 40))
    end
    local code = type(params) == "table" and params.code
    if type(code) ~= "string" then
        return failExec(link, id, "exec-lua needs params.code (a string of Lua)")
    end
    -- Each chunk gets its own globals; reads fall back to what programs see.
    local env = setmetatable({}, { __index = _ENV or _G })
    local fn, err = load(code, "=exec-lua", "t", env)
    if not fn then return failExec(link, id, cutError(tostring(err))) end

    local capture = newCapture(link.maxFrame)
    local chunk = { id = id, co = coroutine.create(fn), capture = capture, target = capture.target }
    link.chunks[id] = chunk
    link.order[#link.order + 1] = chunk
    -- Config-defined tools send their arguments as data: the chunk gets them as `...`.
    if type(params.args) == "table" then stepChunk(link, chunk, params.args) else stepChunk(link, chunk) end
end

-- Hands an event to every chunk waiting for it (as parallel does). Chunks
-- only start from frames, never while this loop runs, so link.order is
-- stable here; finished and cancelled chunks are dropped afterwards.
local CONTINUE = "mcp_computer_continue"

local function deliverToChunks(link, ev, chunks)
    if #link.order == 0 then return end
    link.eventStart, link.tripped = os.clock(), false
    chunks = chunks or link.order
    for i, chunk in ipairs(chunks) do
        if link.tripped then
            -- The watchdog fired: yield at once and hand this event to the
            -- chunks still due it in a fresh resume (a new 7 s) of our own.
            local rest = {}
            for j = i, #chunks do rest[#rest + 1] = chunks[j] end
            link.deferred[#link.deferred + 1] = { ev = ev, chunks = rest }
            os.queueEvent(CONTINUE)
            break
        end
        if not chunk.done and (chunk.filter == nil or chunk.filter == ev[1]) then
            stepChunk(link, chunk, table.unpack(ev, 1, ev.n))
        end
    end
    local alive = {}
    for _, chunk in ipairs(link.order) do
        if not chunk.done then alive[#alive + 1] = chunk end
    end
    link.order = alive
end

---------------------------------------------------------------------------
-- Safe tools (lua-files): fixed Lua the bridge calls by method name; no
-- code is sent. Each tool keeps its functions in one table (a `local` each
-- would run into Lua's limit of 200 locals in this chunk).
---------------------------------------------------------------------------

local safe = {}

-- CC's own error messages without the "file:line: " our error() calls add.
function safe.message(err)
    if type(err) ~= "string" then return describeError(err) end
    return cutError((err:gsub("^[^:%s]+:%d+: ", "")))
end

-- The owner's list of allowed tools (setting mcp.tools: names separated by
-- commas or spaces); nil when every tool is allowed.
function safe.allowed()
    local raw = settings.get("mcp.tools")
    if type(raw) == "table" then raw = table.concat(raw, ",") end
    if type(raw) ~= "string" or raw:find("^[%s,]*$") or raw:find("^[%s,]*%*[%s,]*$") then return nil end
    local set = {}
    for name in raw:gmatch("[^%s,]+") do set[name] = true end
    return set, raw
end

-- Why the owner's settings refuse `name`, or nil when they allow it.
function safe.refusal(name, method)
    if method.always then return nil end
    local set, raw = safe.allowed()
    if set and not set[name] then
        return ("%s is not allowed on this computer: its owner allows only %s (setting mcp.tools)")
            :format(name, shorten(raw, 200))
    end
    if not method.read and settings.get("mcp.readonly") == true then
        return name .. " changes the computer, and its owner made it read-only (setting mcp.readonly)"
    end
    return nil
end

-- Answers a request with what `fn` returns, or with its error.
function safe.call(link, id, fn, params)
    local ok, res = pcall(fn, link, type(params) == "table" and params or {})
    if ok then return respond(link, id, true, res) end
    if res == STOP then error(STOP, 0) end
    return respond(link, id, false, nil, safe.message(res))
end

function safe.ping() return pongText() end

---------------------------------------------------------------------------
-- Files (lua-files): list-files, read-file, write-file, delete-file,
-- move-file. Paths go to CC's fs as given, so its rules (rom/ read-only,
-- no escaping with "..", disks under disk/) and its messages apply.
---------------------------------------------------------------------------

local files = {}

function files.path(params, key)
    local p = params[key or "path"]
    if type(p) ~= "string" then error(("params.%s must be a string"):format(key or "path"), 0) end
    return p
end

-- Number of free bytes, or "unlimited".
function files.free(path)
    local ok, n = pcall(fs.getFreeSpace, path)
    if not ok then return nil end
    if type(n) ~= "number" or n ~= n or n == math.huge then return "unlimited" end
    return n
end

-- One piece of a listing: the entries from params.offset that fit in the
-- frame; the bridge asks again from `next` (each piece is its own event).
function files.list(link, params)
    local path = files.path(params)
    local names = fs.list(path)
    table.sort(names)
    local from = tonumber(params.offset) or 0
    local room = frameBudget(link.maxFrame) - 1024
    local entries, used, i = {}, 0, from + 1
    while names[i] do
        local name = names[i]
        local full = fs.combine(path, name)
        local dir = fs.isDir(full)
        local entry = { name = name, isDir = dir, isReadOnly = fs.isReadOnly(full) }
        if not dir then entry.size = fs.getSize(full) end
        local size = #encode(entry) + 1
        if used + size > room and #entries > 0 then break end
        used = used + size
        entries[#entries + 1] = entry
        i = i + 1
    end
    local result = { path = "/" .. fs.combine(path, ""), entries = array(entries), total = #names,
        isReadOnly = fs.isReadOnly(path), freeSpace = files.free(path) }
    if fs.getDrive then result.drive = fs.getDrive(path) end
    if names[i] then result.next = i - 1 end
    return result
end

-- Base64 (binary-safe on the link, whatever CC's version does with text)
-- and Adler-32 (the checksum the bridge computes too), without bitwise
-- operators.
files.B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
files.enc12, files.dec12, files.dec6, files.chr = {}, {}, {}, {}
do
    local c = {}
    for i = 0, 63 do
        c[i] = files.B64:sub(i + 1, i + 1)
        files.dec6[c[i]] = i
        files.chr[i] = c[i]
    end
    for i = 0, 4095 do
        local pair = c[math.floor(i / 64)] .. c[i % 64]
        files.enc12[i] = pair
        files.dec12[pair] = i
    end
end

function files.encode(s)
    local enc12, full = files.enc12, #s - #s % 3
    local body = s:sub(1, full):gsub("...", function(g)
        local a, b, c = g:byte(1, 3)
        local n = a * 65536 + b * 256 + c
        return enc12[math.floor(n / 4096)] .. enc12[n % 4096]
    end)
    local rest = #s - full
    if rest == 1 then
        local n = s:byte(full + 1) * 16
        body = body .. enc12[n] .. "=="
    elseif rest == 2 then
        local a, b = s:byte(full + 1, full + 2)
        local n = a * 65536 + b * 256
        body = body .. enc12[math.floor(n / 4096)] .. files.chr[math.floor(n % 4096 / 64)] .. "="
    end
    return body
end

function files.decode(s)
    if #s % 4 ~= 0 or s:find("[^%w%+/=]") or s:find("=[^=]") or s:find("===") then
        error("params.data is not base64", 0)
    end
    local dec12, dec6 = files.dec12, files.dec6
    local pad = #s:match("=*$")
    local full = pad > 0 and #s - 4 or #s
    local body = s:sub(1, full):gsub("....", function(q)
        local n = dec12[q:sub(1, 2)] * 4096 + dec12[q:sub(3, 4)]
        return string.char(math.floor(n / 65536), math.floor(n / 256) % 256, n % 256)
    end)
    if pad == 2 then
        body = body .. string.char(math.floor(dec12[s:sub(-4, -3)] / 16))
    elseif pad == 1 then
        local n = dec12[s:sub(-4, -3)] * 64 + dec6[s:sub(-2, -2)]
        body = body .. string.char(math.floor(n / 1024), math.floor(n / 4) % 256)
    end
    return body
end

-- Running Adler-32: files.adler(b, files.adler(a, 1)) == files.adler(a .. b, 1).
function files.adler(s, state)
    local a, b = state % 65536, math.floor(state / 65536)
    local n, i = #s, 1
    while i <= n do
        local j = math.min(i + 1023, n)
        local bytes = { s:byte(i, j) }
        for k = 1, #bytes do
            a = a + bytes[k]
            b = b + a
        end
        a, b = a % 65521, b % 65521
        i = j + 1
    end
    return b * 65536 + a
end

files.VERIFY_PIECE = 262144 -- most bytes checksummed for one answer

function files.open(path, mode)
    local h, err = fs.open(path, mode)
    if not h then error(err or ("/" .. fs.combine(path, "") .. ": No such file"), 0) end
    return h
end

-- One piece of a file from params.offset: as much as fits in a frame (or,
-- with noData, only its checksum over up to VERIFY_PIECE bytes), with the
-- running checksum continued from params.checksum.
function files.read(link, params)
    local path = files.path(params)
    local h = files.open(path, "rb")
    local ok, res = pcall(function()
        local size = fs.getSize(path)
        local offset = math.max(0, math.floor(tonumber(params.offset) or 0))
        local most = params.noData and files.VERIFY_PIECE or math.floor((frameBudget(link.maxFrame) - 1024) / 4) * 3
        local length = math.min(tonumber(params.length) or most, most, math.max(0, size - offset))
        if offset > 0 and length > 0 then
            if h.seek then h.seek("set", offset) else h.read(offset) end
        end
        local data = length > 0 and h.read(length) or ""
        data = data or ""
        local result = { size = size, offset = offset, length = #data, checksum = files.adler(data, tonumber(params.checksum) or 1) }
        if not params.noData then result.data = files.encode(data) end
        return result
    end)
    h.close()
    if not ok then error(res, 0) end
    return res
end

-- One piece of a write: the first one ("first") replaces the file (or
-- appends) and creates its parent folders; the others append. With
-- "verify", the checksum of what the disk holds (read back, no data).
function files.write(link, params)
    local path = files.path(params)
    if params.verify then
        return files.read(link, { path = path, offset = params.offset, length = params.length, checksum = params.checksum, noData = true })
    end
    local data = files.decode(type(params.data) == "string" and params.data or "")
    local mode = "ab"
    if params.first then
        local dir = fs.getDir(path)
        if dir ~= "" and dir ~= ".." and not fs.isReadOnly(dir) and not fs.exists(dir) then fs.makeDir(dir) end
        if params.append ~= true then mode = "wb" end
    end
    local h = files.open(path, mode)
    local ok, err = pcall(h.write, data)
    h.close()
    if not ok then error(err, 0) end
    return { written = #data, size = fs.getSize(path), checksum = files.adler(data, tonumber(params.checksum) or 1) }
end

function files.delete(_, params)
    local path = files.path(params)
    if not fs.exists(path) then error("/" .. fs.combine(path, "") .. ": No such file", 0) end
    local dir = fs.isDir(path)
    if dir and #fs.list(path) > 0 and params.recursive ~= true then
        error("/" .. fs.combine(path, "") .. ": Directory not empty (set recursive to delete it with everything in it)", 0)
    end
    fs.delete(path)
    return { path = "/" .. fs.combine(path, ""), wasDir = dir }
end

function files.move(_, params)
    local from, to = files.path(params, "from"), files.path(params, "to")
    fs.move(from, to)
    return { from = "/" .. fs.combine(from, ""), to = "/" .. fs.combine(to, "") }
end

---------------------------------------------------------------------------
-- The methods the bridge may call: one line each. `read`: it only reads
-- (allowed when mcp.readonly is set); `always`: not subject to mcp.tools.
-- `call(link, params)` returns the result or raises the error message;
-- `start(link, id, params)` answers by itself (exec-lua, later).
---------------------------------------------------------------------------

local METHODS = {
    ["ping"] = { read = true, always = true, call = safe.ping },
    ["exec-lua"] = { read = false, start = startExec },
    ["list-files"] = { read = true, call = files.list },
    ["read-file"] = { read = true, call = files.read },
    ["write-file"] = { read = false, call = files.write },
    ["delete-file"] = { read = false, call = files.delete },
    ["move-file"] = { read = false, call = files.move },
    ["list-peripherals"] = { read = true, call = B.listPeripherals },
    ["call-peripheral"] = { read = false, start = B.callPeripheral },
    ["run-program"] = { read = false, start = B.runOrDetach },
    ["check-lua"] = { read = true, call = B.checkLua },
    ["read-screen"] = { read = true, call = B.readScreen },
    ["send-input"] = { read = false, call = B.sendInput },
    ["job-status"] = { read = true, call = B.jobStatus },
    ["job-cancel"] = { read = false, call = B.jobCancel },
}

local function handleRequest(link, msg)
    if type(msg.id) ~= "string" then
        return warn("ignored a request without a string id")
    end
    local method = type(msg.method) == "string" and METHODS[msg.method]
    if not method then return respond(link, msg.id, false, nil, "unknown method") end
    local refused = safe.refusal(msg.method, method)
    if refused and method.start then
        return sendJson(link, encode({ type = "response", id = msg.id, ok = false, error = refused,
            result = { output = "", returns = array({}), truncated = false, refused = true } }))
    elseif refused then
        return sendJson(link, encode({ type = "response", id = msg.id, ok = false, error = refused,
            result = { refused = true } }))
    end
    if method.start then return method.start(link, msg.id, msg.params) end
    return safe.call(link, msg.id, method.call, msg.params)
end

-- The bridge writes text outside the BMP as a \uD8xx\uDCxx pair; CC's JSON
-- decoder turns each escape into its own utf8.char, leaving two 3-byte
-- sequences (6 invalid bytes for one emoji). Join every such pair into the
-- real 4-byte UTF-8. The bridge's strings are JS strings, so these byte
-- sequences can only have come from a pair.
local PAIR = "\237([\160-\175])([\128-\191])\237([\176-\191])([\128-\191])"

local function joinPair(a, b, c, d)
    local hi = (a:byte() - 0xA0) * 64 + (b:byte() - 0x80)
    local lo = (c:byte() - 0xB0) * 64 + (d:byte() - 0x80)
    local cp = 0x10000 + hi * 1024 + lo
    return string.char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64,
        0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

local function joinSurrogates(v)
    if type(v) == "string" then
        if not v:find("\237", 1, true) then return v end
        return (v:gsub(PAIR, joinPair))
    elseif type(v) ~= "table" then
        return v
    end
    local fixed = {}
    for k, x in pairs(v) do fixed[joinSurrogates(k)] = joinSurrogates(x) end
    return setmetatable(fixed, getmetatable(v))
end

local function decodeFrame(text)
    local ok, msg, err = pcall(textutils.unserializeJSON, text)
    if not ok then return nil, tostring(msg) end
    if msg == nil then return nil, tostring(err or "not JSON") end
    if type(msg) ~= "table" or type(msg.type) ~= "string" then
        return nil, "not a JSON object with a type"
    end
    if text:find("\\u[dD][89abAB]") then msg = joinSurrogates(msg) end
    return msg
end

local function handleFrame(link, text)
    local msg, err = decodeFrame(text)
    if not msg then
        return warn("ignored a malformed frame (" .. shorten(err, 60) .. ")")
    end
    if msg.type == "request" then
        handleRequest(link, msg)
    elseif msg.type == "cancel" then
        local chunk = type(msg.id) == "string" and link.chunks[msg.id]
        if chunk then
            -- Never resumed again and nothing more is sent for it.
            chunk.done = true
            link.chunks[msg.id] = nil
            print("cancelled exec-lua " .. shorten(msg.id, 12))
        end
    elseif msg.type ~= "hello-ok" then
        warn("ignored a frame of unknown type " .. shorten(msg.type, 30))
    end
end

-- Pulls the next event. Ctrl+T unwinds everything; events that are not the
-- link's own go to running exec-lua chunks.
local function nextEvent(link)
    local ev = table.pack(os.pullEventRaw())
    link.resumeStart = os.clock()
    if ev[1] == "terminate" then
        -- In background mode Ctrl+T belongs to the player's shell.
        if not background then error(STOP, 0) end
        return ev
    end
    if ev[1] == STOP_EVENT and background then error(STOP, 0) end
    if ev[1] == STATUS_EVENT and background then
        os.queueEvent(STATUS_REPLY, link.state or "starting", link.url, VERSION)
        return ev
    end
    if ev[1] == PACE_EVENT and #link.answers > 0 then
        local job = table.remove(link.answers, 1)
        job.start = link.resumeStart
        runAnswer(link, job)
    elseif ev[1] == CONTINUE and #link.deferred > 0 then
        local d = table.remove(link.deferred, 1)
        local ok, err = pcall(deliverToChunks, link, d.ev, d.chunks)
        if not ok then printError("internal error: " .. shorten(err, 200)) end
    elseif not isLinkEvent(link, ev) then
        local ok, err = pcall(deliverToChunks, link, ev)
        if not ok then printError("internal error: " .. shorten(err, 200)) end
    end
    return ev
end

local function sleepFor(link, seconds)
    local timer = os.startTimer(seconds)
    repeat
        local ev = nextEvent(link)
    until ev[1] == "timer" and ev[2] == timer
end

local HINTS = {
    ["Domain not permitted"] = {
        "CC:Tweaked blocks private and loopback addresses",
        "(localhost, 127.x, 10.x, 192.168.x ...) by default.",
        "Allow the bridge host in computercraft-server.toml:",
        "see the README section \"Allowing the bridge host\".",
    },
    ["Message is too large"] = {
        "A frame was larger than this server's",
        "max_websocket_message ([[http.rules]]).",
    },
}

local function printHints(link, message)
    for key, lines in pairs(HINTS) do
        if tostring(message):find(key, 1, true) and not link.hinted[key] then
            link.hinted[key] = true
            for _, line in ipairs(lines) do printError(line) end
        end
    end
end

local function websocketDisabled()
    printError("WebSocket connections are disabled on this server.")
    printError("Set websocket_enabled = true in the [http] section")
    printError("of computercraft-server.toml, then restart.")
    error(FATAL, 0)
end

-- Opens the websocket without blocking, so Ctrl+T keeps working.
local function connect(link)
    local async = http.websocketAsync ~= nil
    local open = http.websocketAsync or http.websocket
    link.pending = async
    local ok, started, err = pcall(open, link.url)
    if not ok then
        link.pending = false
        local message = tostring(started)
        if message:find("disabled", 1, true) then websocketDisabled() end
        if message == "Terminated" then error(STOP, 0) end -- blocking http.websocket
        return nil, message
    end
    if not started then
        link.pending = false
        return nil, tostring(err or "Could not connect")
    end
    if not async then return started end
    while true do
        local ev = nextEvent(link)
        if ev[2] == link.url then
            if ev[1] == "websocket_success" then
                link.pending = false
                return ev[3]
            elseif ev[1] == "websocket_failure" then
                link.pending = false
                return nil, tostring(ev[3] or "Could not connect")
            end
        end
    end
end

local function closeReason(reason, code)
    local text = reason and tostring(reason) or "connection closed"
    if code then text = text .. " (code " .. tostring(code) .. ")" end
    return text
end

-- The bridge wants a link token (CC_LINK_TOKEN) and ours is missing or
-- wrong: retrying cannot help, so stop and say how to fix it.
local function tokenRefused()
    printError("the bridge refused the token: set it with")
    printError("set mcp.token <token>  (or --token <token>)")
    error(FATAL, 0)
end

-- Says hello and waits for hello-ok. Returns true when linked, or false and
-- what went wrong.
local function hello(link)
    local frame = identity.fill({ type = "hello", computerId = os.getComputerID(), computerLabel = labelOf(), version = VERSION, token = link.token,
        maxFrame = link.maxFrame })
    link.sentLabel, link.sentPeripherals = frame.computerLabel, encode(frame.peripherals)
    if not sendJson(link, encode(frame)) then return false, link.lost end
    local timer = os.startTimer(HELLO_TIMEOUT)
    while true do
        local ev = nextEvent(link)
        if ev[1] == "timer" and ev[2] == timer then
            return false, "no hello-ok from the bridge within " .. HELLO_TIMEOUT .. " s"
        elseif ev[1] == "websocket_closed" and ev[2] == link.url then
            if tonumber(ev[4]) == 4401 then tokenRefused() end
            return false, "link closed during hello: " .. closeReason(ev[3], ev[4])
        elseif ev[1] == "websocket_message" and ev[2] == link.url then
            local msg, err = decodeFrame(ev[3])
            if not msg then
                warn("ignored a malformed frame (" .. shorten(err, 60) .. ")")
            elseif msg.type == "hello-ok" then
                os.cancelTimer(timer)
                return true
            elseif msg.type == "hello-error" and msg.code == "unauthorized" then
                tokenRefused()
            elseif msg.type == "hello-error" and msg.code == "busy" then
                os.cancelTimer(timer)
                return false, "the bridge is busy: " .. tostring(msg.error)
            elseif msg.type == "hello-error" then
                printError("The bridge refused this computer: " .. tostring(msg.error or "no reason given"))
                error(FATAL, 0)
            else
                warn("ignored a " .. shorten(msg.type, 30) .. " frame before hello-ok")
            end
        end
    end
end

-- Serves requests until the link drops. Returns a description of why, and
-- whether reconnecting makes sense.
local function serve(link)
    print(("linked as %d (Label: %s)"):format(os.getComputerID(), labelOf() or "null"))
    B.reportJobs(link)
    print("waiting for requests... Press Ctrl+T to stop.")
    link.identityTimer = os.startTimer(identity.CHECK_EVERY)
    while true do
        local ev = nextEvent(link)
        identity.watch(link, ev)
        if ev[2] == link.url and ev[1] == "websocket_message" then
            local ok, err = pcall(handleFrame, link, ev[3])
            if not ok then
                if err == STOP then error(STOP, 0) end
                printError("internal error: " .. shorten(err, 200))
            end
        elseif ev[2] == link.url and ev[1] == "websocket_closed" then
            local code = tonumber(ev[4])
            if code and code >= 4000 and code <= 4999 then
                return "link replaced by another connection for computer "
                    .. os.getComputerID() .. ": " .. closeReason(ev[3], code), false
            elseif code == 1001 then
                return "the bridge is shutting down: " .. closeReason(ev[3], code), true
            end
            return "link closed: " .. closeReason(ev[3], code), true
        end
        if link.lost then return link.lost, true end
    end
end

local function dropLink(link)
    if link.ws then pcall(link.ws.close) end
    link.ws, link.lost = nil, nil
    local n = 0
    for _ in pairs(link.chunks) do n = n + 1 end
    if n > 0 then print(("abandoned %d running exec-lua chunk(s)"):format(n)) end
    link.chunks, link.order, link.deferred, link.answers = {}, B.jobChunks(link), {}, {}
end

local function run(link)
    print(("mcp-computer v%s connecting to %s"):format(VERSION, link.url))
    local failures, attempt = 0, 1
    while true do
        link.state = "connecting"
        local ws, err = connect(link)
        local problem, retry, linked = nil, true, false
        if ws then
            link.ws = ws
            local ok, why = hello(link)
            if ok then
                linked = true
                link.state = "linked"
                problem, retry = serve(link)
            else
                problem = why
            end
            dropLink(link)
        else
            problem = "could not connect: " .. err
        end

        if linked then printIn(colours.orange, problem) else printError(problem) end
        printHints(link, problem)
        if not retry then return end
        if link.once then
            if linked then return end
            error(FATAL, 0)
        end

        -- Backoff grows with each failure in a row and starts over once a
        -- link was made.
        if linked then failures, attempt = 0, 0 end
        local delay = math.min(BACKOFF_MAX, 2 ^ failures)
        failures = failures + 1
        attempt = attempt + 1
        link.state = "waiting to reconnect"
        print(("retrying in %d s... Press Ctrl+T to stop."):format(delay))
        sleepFor(link, delay)
        print(("reconnecting to %s (attempt %d)"):format(link.url, attempt))
    end
end

-- After Ctrl+T while a connect was still pending: give it a moment to
-- settle so a late success does not leave a socket open.
local function settlePendingConnect(link)
    local timer = os.startTimer(STOP_GRACE)
    while true do
        local ev = table.pack(os.pullEventRaw())
        if ev[1] == "terminate" or (ev[1] == "timer" and ev[2] == timer) then return end
        if ev[2] == link.url then
            if ev[1] == "websocket_success" then
                pcall(ev[3].close)
                return
            elseif ev[1] == "websocket_failure" then
                return
            end
        end
    end
end

local function stopLink(link)
    if link.ws then
        for id, chunk in pairs(link.chunks) do
            chunk.done = true
            failExec(link, id, "mcp-computer was stopped (Ctrl+T) while this chunk was running")
        end
        link.chunks, link.order, link.deferred, link.answers = {}, {}, {}, {}
        pcall(link.ws.close)
        link.ws = nil
    end
    if link.pending then settlePendingConnect(link) end
end

---------------------------------------------------------------------------
-- Command line
---------------------------------------------------------------------------

-- Run through "wget run <url> ..." (issue 14, finding 8): CC's wget
-- (rom/programs/http/wget.lua) loads this file's text and calls it inside
-- its own program, so shell.getRunningProgram() and arg[0] name wget, no
-- file of ours is on disk, and wget prints whatever error we end with (a
-- bare error() shows as "nil").
local WGET = "rom/programs/http/wget.lua"
local INSTALL_PATH = "/mcp-computer.lua"

local function viaWget()
    local running = shell and shell.getRunningProgram and shell.getRunningProgram()
    return type(running) == "string" and running:gsub("^/+", "") == WGET
end

-- The path this program runs from, or nil when it has no file (wget run).
local function selfPath()
    if viaWget() then return nil end
    return "/" .. shell.getRunningProgram()
end

-- Saves the program the bridge serves next to its link (GET /mcp-computer.lua
-- on the same host and port) as INSTALL_PATH, for a startup file to run.
local function installSelf(wsUrl)
    local scheme, host = wsUrl:match("^(wss?)://([^/?#]+)")
    local from = (scheme == "wss" and "https" or "http") .. "://" .. tostring(host) .. "/mcp-computer.lua"
    local ok, handle, err = pcall(http.get, from, nil, true)
    if not ok then handle, err = nil, handle end
    local text = handle and handle.readAll()
    if handle then handle.close() end
    if type(text) ~= "string" or not text:find("mcp-computer", 1, true) then
        printError("Could not download the program from " .. from .. ": " .. tostring(err or "not mcp-computer.lua"))
        printError("Save it first: wget " .. from .. " mcp-computer.lua")
        error(FATAL, 0)
    end
    local file = fs.open(INSTALL_PATH, "wb")
    if not file then
        printError("Could not write " .. INSTALL_PATH)
        error(FATAL, 0)
    end
    file.write(text)
    file.close()
    print("Saved the program as " .. INSTALL_PATH .. ".")
    return INSTALL_PATH
end

local function programName()
    if viaWget() then return "mcp-computer" end
    local name = type(arg) == "table" and arg[0] or nil
    if type(name) ~= "string" and shell then name = shell.getRunningProgram() end
    name = fs.getName(name or "mcp-computer")
    if name:sub(-4) == ".lua" then name = name:sub(1, -5) end
    return name
end

local function usageLines()
    local p = programName()
    return {
        "Usage:",
        p .. " <ws-url> [options]",
        p .. " -url <ws-url> [options]",
        p .. " startup <ws-url> [options]",
        p .. " startup off",
        p .. " status | stop",
        p .. " --help | --version",
    }
end

local function printHelp()
    for _, line in ipairs(usageLines()) do print(line) end
    print("Options:")
    print("  --background     run beside the shell (status in")
    print("                   " .. LOG_FILE .. ")")
    print("  --monitor <side> also show the status on a monitor")
    print("  --foreground     startup: run in front (no shell)")
    print("  --once           exit when the link drops")
    print("  --no-exec        refuse exec-lua requests")
    print("  --max-frame <n>  largest frame to send (bytes)")
    print("  --token <t>      link token (CC_LINK_TOKEN); or set mcp.token")
    print("Without a URL the setting mcp.url is used:")
    print("  set mcp.url ws://<bridge-host>:3001")
    print("set mcp.exec false also refuses exec-lua.")
end

local function usageError(message)
    if message then printError(message) end
    for _, line in ipairs(usageLines()) do printError(line) end
    error(FATAL, 0)
end

local function defineSettings()
    if not (settings and settings.define) then return end
    settings.define("mcp.url", {
        description = "Bridge link URL for mcp-computer when run without one, e.g. ws://192.168.1.20:3001",
        type = "string",
    })
    settings.define("mcp.token", {
        description = "Link token the bridge asks for (its CC_LINK_TOKEN)",
        type = "string",
    })
    settings.define("mcp.exec", {
        description = "Whether mcp-computer lets the bridge run Lua here (exec-lua)",
        type = "boolean",
        default = true,
    })
    settings.define("mcp.tools", {
        description = "Tools the bridge may use here, separated by commas (e.g. list-files,read-file); unset: all",
        type = "string",
    })
    settings.define("mcp.readonly", {
        description = "Allow only the tools that read (list-files, read-file ...), nothing that changes the computer",
        type = "boolean",
        default = false,
    })
end

local function normaliseUrl(url)
    if not url:find("^%a[%w+.-]*://") then url = "ws://" .. url end
    local scheme = url:match("^(%a[%w+.-]*)://"):lower()
    if scheme ~= "ws" and scheme ~= "wss" then
        usageError("Not a WebSocket URL: " .. url .. " (use ws://host:port)")
    end
    return url
end

local function parseArgs(args)
    local opts = { once = false, exec = true, maxFrame = DEFAULT_MAX_FRAME, extra = {} }
    local positional = {}
    local i = 1
    while i <= #args do
        local a = args[i]
        local flag = a:match("^%-%-?(.+)$")
        if flag == "url" then
            if args[i + 1] == nil then usageError("-url needs a URL") end
            opts.url = args[i + 1]
            i = i + 1
        elseif flag == "token" then
            if args[i + 1] == nil then usageError("--token needs the bridge's link token") end
            opts.token = args[i + 1]
            opts.extra[#opts.extra + 1] = "--token"
            opts.extra[#opts.extra + 1] = args[i + 1]
            i = i + 1
        elseif flag == "background" or flag == "service" or flag == "from-startup" then
            -- --service: already started beside the shell; --from-startup:
            -- run by the startup file (both internal).
            opts[flag] = true
        elseif flag == "foreground" then
            opts.foreground = true
        elseif flag == "monitor" then
            if args[i + 1] == nil then usageError("--monitor needs a side or peripheral name") end
            opts.monitor = args[i + 1]
            opts.extra[#opts.extra + 1] = "--monitor"
            opts.extra[#opts.extra + 1] = args[i + 1]
            i = i + 1
        elseif flag == "once" then
            opts.once = true
        elseif flag == "no-exec" then
            opts.exec = false
            opts.extra[#opts.extra + 1] = "--no-exec"
        elseif flag == "max-frame" then
            local n = tonumber(args[i + 1])
            if not n or n ~= math.floor(n) or n < MIN_MAX_FRAME then
                usageError("--max-frame needs a whole number of bytes >= " .. MIN_MAX_FRAME)
            end
            opts.maxFrame = n
            opts.extra[#opts.extra + 1] = "--max-frame"
            opts.extra[#opts.extra + 1] = args[i + 1]
            i = i + 1
        elseif flag == "help" or flag == "version" then
            opts.command = flag
        elseif flag then
            usageError("Unknown option: " .. a)
        else
            positional[#positional + 1] = a
        end
        i = i + 1
    end

    local first = positional[1]
    if opts.command then
        return opts
    elseif first == "help" or first == "version" or first == "status" or first == "stop" then
        if positional[2] then usageError("Too many arguments") end
        opts.command = first
    elseif first == "startup" then
        opts.command = "startup"
        opts.startupArg = positional[2] or opts.url
        if positional[3] then usageError("Too many arguments") end
    else
        opts.command = "run"
        if first then
            if opts.url then usageError("Give the URL once") end
            opts.url = first
        end
        if positional[2] then usageError("Too many arguments") end
    end
    return opts
end

local function startupCommand(opts)
    local target = opts.startupArg
    if target == nil then usageError("startup needs a URL or off") end
    if target == "off" then
        if fs.exists(STARTUP_FILE) then
            fs.delete(STARTUP_FILE)
            print("Removed " .. STARTUP_FILE .. "; the link no longer starts at boot.")
        else
            print("Nothing to remove: " .. STARTUP_FILE .. " does not exist.")
        end
        return
    end

    local url = normaliseUrl(target)
    if fs.exists("/startup") and not fs.isDir("/startup") then
        printError("/startup is a file, so " .. STARTUP_FILE .. " cannot be created.")
        printError("Move it to /startup/00-startup.lua first.")
        error(FATAL, 0)
    end
    if not fs.exists("/startup") then fs.makeDir("/startup") end

    local program = selfPath() or installSelf(url)
    local args = { string.format("%q", program), string.format("%q", url) }
    local flags = {}
    if not opts.foreground then flags = { "--background", "--from-startup" } end
    for _, a in ipairs(opts.extra) do flags[#flags + 1] = a end
    for _, a in ipairs(flags) do args[#args + 1] = string.format("%q", a) end
    local file = fs.open(STARTUP_FILE, "w")
    if not file then
        printError("Could not write " .. STARTUP_FILE)
        error(FATAL, 0)
    end
    file.write("-- Written by \"mcp-computer startup\"; remove with \"mcp-computer startup off\".\n")
    file.write("shell.run(" .. table.concat(args, ", ") .. ")\n")
    file.close()
    print("Wrote " .. STARTUP_FILE .. ":")
    print("at boot it runs " .. program .. " " .. url .. (#flags > 0 and (" " .. table.concat(flags, " ")) or ""))
end

local function checkHttp()
    if not http then
        printError("mcp-computer needs the http API, but HTTP is")
        printError("disabled on this server. Set enabled = true in")
        printError("the [http] section of computercraft-server.toml")
        printError("(http.enabled), then restart.")
        error(FATAL, 0)
    end
    if type(http.websocket) ~= "function" then
        printError("http.websocket is missing: WebSocket connections")
        printError("are disabled (websocket_enabled = false in the")
        printError("[http] section of computercraft-server.toml) or")
        printError("this CC version is too old.")
        error(FATAL, 0)
    end
end

local function nonEmpty(value)
    if type(value) == "string" and value ~= "" then return value end
    return nil
end

-- Waits up to `seconds` for event `name`; nil when it does not come.
local function awaitEvent(name, seconds)
    local timer = os.startTimer(seconds)
    while true do
        local ev = table.pack(os.pullEvent())
        if ev[1] == name then
            os.cancelTimer(timer)
            return ev
        end
        if ev[1] == "timer" and ev[2] == timer then return nil end
    end
end

local function lastLines(text, n)
    local lines = {}
    for line in text:gmatch("[^\n]+") do
        lines[#lines + 1] = line
        if #lines > n then table.remove(lines, 1) end
    end
    return lines
end

local function statusCommand()
    os.queueEvent(STATUS_EVENT)
    local reply = awaitEvent(STATUS_REPLY, 1)
    if reply then
        print(("background link: %s, bridge %s (v%s)"):format(tostring(reply[2]), tostring(reply[3]), tostring(reply[4])))
    else
        print("No background link is running on this computer.")
    end
    local log = readAll(LOG_FILE)
    if log and log ~= "" then
        print("Last lines of " .. LOG_FILE .. ":")
        for _, line in ipairs(lastLines(log, 8)) do print(line) end
    end
end

local function stopCommand()
    os.queueEvent(STOP_EVENT)
    if awaitEvent(STOPPED_EVENT, 3) then
        print("Stopped the background link.")
    else
        print("No background link is running on this computer.")
    end
end

-- The link itself in background mode: a crash is logged and never reaches
-- the shell beside it; `mcp-computer stop` ends it.
local function serviceLink(link)
    local ok, err = pcall(run, link)
    stopLink(link)
    link.state = "stopped"
    if ok or err == STOP then
        print("mcp-computer stopped.")
    elseif err ~= FATAL then
        printError("mcp-computer crashed: " .. shorten(err, 300))
    end
    os.queueEvent(STOPPED_EVENT)
end

-- The player's shell's terminal, handed from the launcher to the link in
-- its multishell tab (read-screen reads it; tabs share the globals).
-- multishell gives a tab's programs only the plain terminal methods of its
-- window (no getLine), and the shell redirects back to that terminal table
-- before each prompt; so the launcher makes that very table mirror what is
-- drawn through it (its methods wrapped in place).
local SHELL_SCREEN = "mcp_computer_shell_screen"

local function startBackground(opts, link, screen)
    background = { monitor = nil, screen = screen }
    if opts.monitor then
        local mon = peripheral and peripheral.wrap and peripheral.wrap(opts.monitor)
        if mon and mon.write and mon.scroll then
            background.monitor = mon
        else
            print("warning: no monitor " .. opts.monitor .. "; status only in " .. LOG_FILE)
        end
    end
    print(("mcp-computer v%s in the background (computer %d)"):format(VERSION, os.getComputerID()))
end

-- `--background` from the shell: an advanced computer gets the link in a
-- multishell tab and the prompt back at once; elsewhere a shell and the
-- link run side by side (as parallel does) until the player exits it.
local function launchBackground(opts, link)
    local program = selfPath()
    if program and multishell and shell.openTab then
        local current, plain = term.current(), {}
        for k, v in pairs(current) do plain[k] = v end
        local mirror = B.newMirror(plain)
        for k, v in pairs(mirror) do current[k] = v end
        _G[SHELL_SCREEN] = mirror
        local words = { program, link.url, "--service" }
        for _, a in ipairs(opts.extra) do words[#words + 1] = a end
        local id = shell.openTab(table.concat(words, " "))
        if id and multishell.setTitle then multishell.setTitle(id, "mcp") end
        screenPrint(("mcp-computer: linking to %s in tab %s; see"):format(link.url, tostring(id)))
        screenPrint("\"mcp-computer status\" and \"mcp-computer stop\".")
        return
    end
    -- The shell runs in a terminal that keeps a copy of the screen (read-screen).
    local mirror = B.newMirror(term.current())
    local outer = term.redirect(mirror)
    screenPrint(("mcp-computer: linking to %s in the background;"):format(link.url))
    screenPrint("see \"mcp-computer status\" and \"mcp-computer stop\".")
    parallel.waitForAny(function()
        if opts["from-startup"] then
            -- rom/startup.lua waits for this file: run the startup files
            -- after it here, then the shell; when the player exits it the
            -- computer shuts down as after the top-level shell.
            local mine = fs.getName(STARTUP_FILE)
            for _, name in ipairs(fs.list("/startup")) do
                if name > mine then shell.run(fs.combine("/startup", name)) end
            end
        end
        shell.run("shell")
        if opts["from-startup"] then os.shutdown() end
    end, function()
        startBackground(opts, link, mirror)
        serviceLink(link)
        while true do os.pullEventRaw() end -- the shell keeps going
    end)
    term.redirect(outer)
    stopLink(link)
    background = nil
end

local function main(...)
    defineSettings()
    local opts = parseArgs({ ... })
    if opts.command == "help" then return printHelp() end
    if opts.command == "version" then return print("mcp-computer v" .. VERSION) end
    if opts.command == "startup" then return startupCommand(opts) end
    if opts.command == "status" then return statusCommand() end
    if opts.command == "stop" then return stopCommand() end

    local url = opts.url
    if url == nil then
        local saved = settings.get("mcp.url")
        if type(saved) == "string" and saved ~= "" then url = saved end
    end
    if url == nil then usageError() end
    url = normaliseUrl(url)
    checkHttp()

    local link = {
        token = opts.token or nonEmpty(settings.get("mcp.token")),
        url = url, once = opts.once, exec = opts.exec, maxFrame = opts.maxFrame,
        chunks = {}, order = {}, deferred = {}, answers = {}, hinted = {}, jobs = {},
    }
    if opts.service then
        local screen = rawget(_G, SHELL_SCREEN)
        _G[SHELL_SCREEN] = nil
        startBackground(opts, link, screen)
        return serviceLink(link)
    elseif opts.background then
        return launchBackground(opts, link)
    end
    local ok, err = pcall(run, link)
    stopLink(link)
    if not ok then
        if err == STOP then return printIn(colours.orange, "mcp-computer stopped.") end
        error(err, 0)
    end
end

local ok, err = pcall(main, ...)
if not ok then
    if err == FATAL then
        -- The reason was printed. Under wget run there is no exit status to
        -- set, and wget would print the error value.
        if viaWget() then return end
        error()
    end
    error(err, 0)
end
