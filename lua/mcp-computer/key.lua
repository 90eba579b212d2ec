-- mcp-computer part key.lua: this computer's own key (the setting mcp.key), sent in every hello.
-- scripts/build-lua.js joins the parts into the one program the bridge serves (see core.lua).
--
-- The bridge pins a computer id to the first key it links with (its CC_LINK_PIN), so a peer that
-- can reach the link port cannot take this computer's id over. The key is made once, on the
-- first run that links, and kept with settings.save so it survives reboots. It is never printed.
--
-- Strength, honestly: CC has no cryptographic random source. math.random is seeded from the
-- millisecond clock, os.clock(), the computer id and a table address (a Lua 5.2 seed holds at most
-- 32 bits), and each of the 32 characters adds how many loop turns the millisecond clock took to
-- move on (timing jitter, not measured on a real server) and a new table's address. The key only
-- has to resist guessing online: the bridge never shows it or its hash, and takes a limited number
-- of hellos a second from an address (CC_HELLO_RATE).

local KEY_SETTING = "mcp.key"
local KEY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
local KEY_LENGTH = 32
-- the bridge takes 16 to 128 of these characters (src/link/frames.ts parseKey)
local function validKey(key)
    return type(key) == "string" and #key >= 16 and #key <= 128 and key:find("^[%w_%-]+$") ~= nil
end

-- A table's address ("table: 0x55d0c8a1b2c0", "table: 6e8d7c4b"): its last 8 hex digits.
local function addressBits()
    local hex = tostring({}):match("(%x+)$") or "0"
    return tonumber(hex:sub(-8), 16) or 0
end

-- Loop turns until the millisecond clock moves on (at most 5000, so a coarse clock costs little).
local function jitter()
    local start, n = os.epoch("utc"), 0
    while os.epoch("utc") == start and n < 5000 do n = n + 1 end
    return n
end

local function newKey()
    local seed = os.epoch("utc") + os.getComputerID() * 7919 + math.floor(os.clock() * 1000) * 104729 + addressBits()
    math.randomseed(seed % 4294967296)
    local out = {}
    for i = 1, KEY_LENGTH do
        local v = (math.random(0, 63) + jitter() + addressBits()) % 64 + 1
        out[i] = KEY_CHARS:sub(v, v)
    end
    return table.concat(out)
end

-- This computer's key: the saved one, or a new one made and saved now. A value that is not a
-- key (set by hand) is replaced, with a warning, since the bridge would refuse the hello.
function M.computerKey()
    local key = settings.get(KEY_SETTING)
    if validKey(key) then return key end
    if key ~= nil then warn("mcp.key was not a key (16-128 of A-Z a-z 0-9 _ -); made a new one") end
    key = newKey()
    settings.set(KEY_SETTING, key)
    -- Not saved (CC could not open /.settings: a full disk, a folder in the way): this run still links
    -- with the key, which the bridge pins; after a reboot the computer makes another key, which that
    -- bridge refuses (key_mismatch) until its operator resets the pin. Said in red, as an error.
    if not settings.save(".settings") then
        printError("could not save mcp.key to /.settings (full disk?): this run links with a new key, but after a reboot this computer makes another, which the bridge refuses until its operator runs cc-mcp pin-reset " .. os.getComputerID())
    end
    return key
end
