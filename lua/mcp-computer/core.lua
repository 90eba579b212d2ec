-- mcp-computer: links this ComputerCraft computer to a cc-mcp-bridge.
--
-- The computer dials out to the bridge's link listener with http.websocket,
-- says hello, then answers the bridge's requests (ping, exec-lua) until the
-- link drops (then it reconnects with backoff) or Ctrl+T is pressed.
--
-- Run "mcp-computer --help" for usage. It is one program (the bridge serves
-- it at GET /mcp-computer.lua, so it can be copied onto a computer as is),
-- built by scripts/build-lua.js (npm run build) from lua/mcp-computer/:
-- this part, core.lua, at the top level where every part sees it, then each
-- other part in its own do ... end block, in the order the script lists.
-- A part's top-level locals end with its block (Lua allows 200 locals in a
-- function, the main chunk included); what later parts use goes through M.

local VERSION = "0.1.0"

local DEFAULT_MAX_FRAME = 131072 -- CC's default max_websocket_message
local MIN_MAX_FRAME = 1024
local HELLO_TIMEOUT = 5 -- seconds to wait for hello-ok
local CONNECT_TIMEOUT = 60 -- seconds to wait for websocket_success/failure (CC's own timeout is shorter)
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
        -- The terminal is put back whatever happens: a monitor removed since
        -- raises, and a terminal left on it would break the shell beside us
        -- and every exec-lua capture after.
        local previous = term.current()
        local ok = pcall(function()
            term.redirect(bg.monitor)
            screenPrint(text)
        end)
        term.redirect(previous)
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

-- Pacing (issue 14, finding 2). CC stops a computer that runs about 7 s
-- after it was resumed for an event without yielding (TimeoutState), and
-- shuts it down 1.5 s later. An exec-lua answer is built in a coroutine of
-- its own (see finishChunk); while it runs, pace() yields once the current
-- resume has used SLICE seconds, and the main loop resumes it for a
-- PACE_EVENT it queued, so other events are served in between. pace() is
-- only called where a yield is legal (never inside gsub or sort callbacks).
-- Slices are wall time, as CC's watchdog counts: os.clock counts the
-- server's ticks (0.05 s each), which come slower when the server lags, so
-- at 1 TPS a slice of 0.25 s by os.clock would be 5 s. os.epoch("utc") is
-- wall time (CC:T 1.80+; older CC has only os.clock).
local SLICE = 0.25
local PACE_EVENT = "mcp_computer_pace"
local PACE = {} -- yielded by pace()
local pacer = nil -- { start = wallClock() of this resume, n = calls } inside an answer's coroutine

local wallClock = os.clock
if type(os.epoch) == "function" and pcall(os.epoch, "utc") then
    wallClock = function() return os.epoch("utc") / 1000 end
end

local function pace()
    local p = pacer
    if not p then return end
    p.n = p.n + 1
    if p.n < 4 then return end
    p.n = 0
    if wallClock() - p.start >= SLICE then coroutine.yield(PACE) end
end

-- What a part gives the parts after it: each part ends with M.name = name
-- lines, and starts with local name = M.name lines for what it uses.
local M = {}
