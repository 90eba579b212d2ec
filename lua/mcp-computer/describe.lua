-- mcp-computer part describe.lua: describing returned values (descriptors, byte strings, tables, fitting them to a frame).
-- scripts/build-lua.js joins the parts into the one program the bridge serves (see core.lua).

-- From the parts before this one (see M in core.lua).
local NULL, array, cutToEncoded, encode, formatNumber, isCont = M.NULL, M.array, M.cutToEncoded, M.encode, M.formatNumber, M.isCont
local isFinite, pieceEnd = M.isFinite, M.pieceEnd

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

-- The name of key k in the copy of t (out: the copy so far). JSON keys are
-- text, so different Lua keys can have the same text: the number 1 and the
-- string "1", true and "true", a byte string key shown as \233 and the
-- UTF-8 key \233. Nothing may be lost, so every key gets its own name: a
-- UTF-8 string key is always its own text; any other key takes its text if
-- no UTF-8 string key of t has it and no earlier key took it, else its text
-- with " (<type> key)" added, else " (<type> key 2)", " (<type> key 3)" ...
-- (type being Lua's type() of the key: a byte string key is a "string key").
-- Also returns whether k is a byte string (listed in the descriptor's bytes).
local function keyName(t, k, out, suffixes)
    local tk = type(k)
    local byteKey = tk == "string" and not isUtf8(k)
    if tk == "string" and not byteKey and out[k] == nil then return k, false end
    local text = byteKey and byteText(k) or keyString(k)
    if (tk ~= "string" or byteKey) and out[text] == nil and rawget(t, text) == nil then return text, byteKey end
    local base = text .. " (" .. tk .. " key"
    local n, name = suffixes[base] or 1, nil
    while true do
        name = n == 1 and base .. ")" or base .. " " .. n .. ")"
        if out[name] == nil and rawget(t, name) == nil then break end
        n = n + 1
        if n % 256 == 0 then pace() end
    end
    suffixes[base] = n + 1
    return name, byteKey
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
        local suffixes = {}
        for k, v in next, t do
            if full(lim, st) then break end
            local key, byteKey = keyName(t, k, out, suffixes)
            st.items, st.bytes = st.items + 1, st.bytes + #key + 4
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

-- For the parts after this one.
M.describe, M.fitReturns = describe, fitReturns
