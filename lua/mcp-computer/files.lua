-- mcp-computer part files.lua: safe tools: ping, the owner's settings, and the file methods.
-- scripts/build-lua.js joins the parts into the one program the bridge serves (see core.lua).

-- From the parts before this one (see M in core.lua).
local array, cutError, describeError, encode, frameBudget, pongText = M.array, M.cutError, M.describeError, M.encode, M.frameBudget, M.pongText
local respond = M.respond

---------------------------------------------------------------------------
-- Safe tools (lua-files): fixed Lua the bridge calls by method name; no
-- code is sent. Each tool keeps its functions in one table (a `local` each
-- would run into Lua's limit of 200 locals in this chunk).
---------------------------------------------------------------------------

local safe = {}

-- CC's own error messages without the "file:line: " our error() calls add.
function safe.message(err)
    if type(err) ~= "string" then return (describeError(err)) end
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

-- Bytes of a file answer's frame left for its entries or data: the frame
-- budget less room for the rest of the answer (1 KiB, or half the frame
-- when it is as small as 1 or 2 KiB, so a piece is never empty).
function files.room(link)
    return frameBudget(link.maxFrame) - math.min(1024, math.floor(link.maxFrame / 2))
end

-- One piece of a listing: the entries from params.offset that fit in the
-- frame; the bridge asks again from `next` (each piece is its own event).
function files.list(link, params)
    local path = files.path(params)
    local names = fs.list(path)
    table.sort(names)
    local from = tonumber(params.offset) or 0
    local room = files.room(link)
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
        local most = params.noData and files.VERIFY_PIECE or math.floor(files.room(link) / 4) * 3
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

-- For the parts after this one.
M.files, M.safe = files, safe
