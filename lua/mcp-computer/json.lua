-- mcp-computer part json.lua: the JSON encoder for frames (ASCII-only, paced).
-- scripts/build-lua.js joins the parts into the one program the bridge serves (see core.lua).

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

-- Whole numbers as integers. -0 is written 0 (CC's own textutils.serializeJSON
-- writes -0): the bridge reads frames with JSON.parse and shows what it got with
-- JSON.stringify and String(), which both give 0 for -0, so no user ever saw -0.
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

-- For the parts after this one.
M.NULL, M.array, M.cutToEncoded, M.encode, M.formatNumber, M.isCont = NULL, array, cutToEncoded, encode, formatNumber, isCont
M.isFinite, M.pieceEnd, M.encodeString, M.decodeChar = isFinite, pieceEnd, encodeString, decodeChar
