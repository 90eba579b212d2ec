-- cc-emu.lua: just enough of a CC:Tweaked computer, in stock Lua 5.2, to run
-- lua/mcp-computer.lua under test. Written for this project from CC's
-- documented behaviour; it is not CC's code.
--
--   lua5.2 cc-emu.lua --root DIR [options] -- <command> [args...]
--
-- <command> is run the way CC's shell would run it (e.g. "mcp-computer"
-- resolves to /mcp-computer.lua inside DIR).
--
-- Options:
--   --root DIR          directory that is the computer's file system (required)
--   --id N              computer id (default 1)
--   --label-hex HEX     computer label, hex encoded (default: no label)
--   --size WxH          terminal size (default 51x19)
--   --mono              terminal is not colour
--   --no-http           no http API at all (http.enabled = false)
--   --ws-disabled       http.websocket throws "Websocket connections are disabled"
--   --ws-missing        http has no websocket functions
--   --no-async          http has no websocketAsync (older CC)
--   --native-async      http.websocketAsync is the native function (CC 1.100):
--                       an immediate failure returns false, message and
--                       queues no websocket_failure
--   --multishell        an advanced computer: the command runs in tab 1 of
--                       multishell (each tab in a window)
--   --max-websockets N  open websockets allowed (http.max_websockets, 4)
--   --websockets-in-use N  websockets other programs hold open (0)
--   --ws-fail-hex HEX   every connect fails later with this websocket_failure message
--   --ws-sync-fail-hex HEX  every connect fails at once with false, message
--   --old-json          textutils.serializeJSON without options tables (CC < 1.106), and
--                       unserializeJSON without parse_empty_array (CC < 1.100.6): [] is
--                       always textutils.empty_json_array
--   --max-message N     websocket message limit in bytes (default 131072)
--   --watchdog S        seconds of running (per resume) before "Too long without yielding" (7)
--   --tick-rate R       os.clock() runs at R times the watchdog's clock (1): CC's os.clock counts
--                       server ticks, so a server at 5 TPS is 0.25; os.epoch("utc") is not slowed
--   --hard-abort S      seconds more before the computer is hard-aborted (1.5)
--   --peripheral N=KIND attach a peripheral named N: monitor, chest, barrel or modem
--   --sync-host         before taking each event, ask the host for what it has
--                       ("sync", answered by "go"): events the host sent while
--                       the computer ran are queued first, as CC's are
--
-- Line protocol on stdin/stdout (payloads are hex encoded):
--   emu -> host:  w <hex> | nl | fg <n> | bg <n> | timer <id> <seconds>
--                 | cancel-timer <id> | ws-open <id> <hex url> | ws-send <id> <hex> <0|1>
--                 | ws-close <id> | modem <channel> <reply> <hex> | exit <code>
--                 | dropped <hex name> [<n>]  an event CC's full queue dropped (n: its
--                                      first argument when a number, e.g. a timer's id)
--                 | sync                 (--sync-host) send what you have, then "go"
--   host -> emu:  ev <token>...      queue an event; tokens are s:<hex> n:<number>
--                                    b:<0|1> nil h:<websocket id>
--                 closed <id>        the host saw websocket <id> close
--                 attach NAME=KIND   attach a peripheral (as --peripheral) and queue "peripheral"
--                 detach NAME        detach it and queue "peripheral_detach"
--                 heap               a full garbage collection, then "heap <KiB in use>" back
--                                    (tests of what the program keeps after a request)
--                 batch N            the next N lines arrive together: all are read
--                                    (their events queued) before anything runs
--                 clock S            os.clock() jumps S seconds ahead
--                 go                 (--sync-host) the end of the answer to "sync"
-- When its event queue is empty the emulator blocks reading stdin.
-- Like CC (ComputerExecutor.QUEUE_LIMIT), the queue holds at most 256 events
-- (the one being handled not counted); an event queued beyond that is dropped
-- silently (os.queueEvent gives no error), and the host is told ("dropped").

local real = {
    read = io.read, stdout = io.stdout, open = io.open, popen = io.popen,
    execute = os.execute, exit = os.exit, clock = os.clock, time = os.time,
    date = os.date, sethook = debug.sethook, collectgarbage = collectgarbage,
}

---------------------------------------------------------------------------
-- Command line
---------------------------------------------------------------------------

local HEX, UNHEX = {}, {}
for i = 0, 255 do
    local c, h = string.char(i), string.format("%02x", i)
    HEX[c], UNHEX[h], UNHEX[h:upper()] = h, c, c
end
local function hex(s) return (s:gsub(".", HEX)) end
local function unhex(s) return (s:gsub("%x%x", UNHEX)) end

local cfg = {
    id = 1, width = 51, height = 19, colour = true, http = true, ws = "enabled",
    async = true, unicodeJson = true, maxMessage = 131072, watchdog = 7, hardAbort = 1.5,
    maxWebsockets = 4, websocketsInUse = 0, tickRate = 1,
    peripherals = {},
}
local command, commandArgs
do
    local argv, i = { ... }, 1
    while i <= #argv do
        local a = argv[i]
        local function value()
            i = i + 1
            if argv[i] == nil then error("cc-emu: " .. a .. " needs a value", 0) end
            return argv[i]
        end
        if a == "--" then
            command = argv[i + 1]
            commandArgs = { table.unpack(argv, i + 2) }
            break
        elseif a == "--root" then cfg.root = value()
        elseif a == "--id" then cfg.id = tonumber(value())
        elseif a == "--label-hex" then cfg.label = unhex(value())
        elseif a == "--size" then
            local w, h = value():match("^(%d+)x(%d+)$")
            cfg.width, cfg.height = tonumber(w), tonumber(h)
        elseif a == "--mono" then cfg.colour = false
        elseif a == "--no-http" then cfg.http = false
        elseif a == "--ws-disabled" then cfg.ws = "disabled"
        elseif a == "--ws-missing" then cfg.ws = "missing"
        elseif a == "--no-async" then cfg.async = false
        elseif a == "--ws-fail-hex" then cfg.wsFail = unhex(value())
        elseif a == "--ws-sync-fail-hex" then cfg.wsSyncFail = unhex(value())
        elseif a == "--old-json" then cfg.unicodeJson = false
        elseif a == "--max-message" then cfg.maxMessage = tonumber(value())
        elseif a == "--native-async" then cfg.nativeAsync = true
        elseif a == "--multishell" then cfg.multishell = true
        elseif a == "--max-websockets" then cfg.maxWebsockets = tonumber(value())
        elseif a == "--websockets-in-use" then cfg.websocketsInUse = tonumber(value())
        elseif a == "--watchdog" then cfg.watchdog = tonumber(value())
        elseif a == "--tick-rate" then cfg.tickRate = tonumber(value())
        elseif a == "--hard-abort" then cfg.hardAbort = tonumber(value())
        elseif a == "--settings-save-fails" then cfg.settingsSaveFails = true
        elseif a == "--sync-host" then cfg.syncHost = true
        elseif a == "--peripheral" then cfg.peripherals[#cfg.peripherals + 1] = value()
        else error("cc-emu: unknown option " .. a, 0) end
        i = i + 1
    end
    if not cfg.root or not command then
        error("usage: lua5.2 cc-emu.lua --root DIR [options] -- <command> [args...]", 0)
    end
end

---------------------------------------------------------------------------
-- Host link and event queue
---------------------------------------------------------------------------

real.stdout:setvbuf("full")
local function emit(line)
    real.stdout:write(line, "\n")
end

local function exit(code)
    emit("exit " .. code)
    real.stdout:flush()
    real.exit(code)
end

local QUEUE_LIMIT = 256
local queue, qHead, qTail = {}, 1, 0
local function push(ev)
    if qTail - qHead + 1 >= QUEUE_LIMIT then
        emit("dropped " .. hex(tostring(ev[1])) .. (type(ev[2]) == "number" and " " .. ev[2] or ""))
        return
    end
    qTail = qTail + 1
    queue[qTail] = ev
end
local clockOffset = 0 -- seconds added to os.clock() by the host ("clock S")
local epochBase = real.time() - real.clock() -- os.epoch("utc") in seconds, less the CPU clock

local websockets = {} -- id -> handle state
local decodeToken, hostAttach

local function readLine()
    real.stdout:flush()
    local line = real.read("*l")
    if line == nil then real.exit(3) end -- the host went away
    return line
end

local function hostLine(line)
    local cmd, rest = line:match("^(%S+)%s*(.*)$")
    if cmd == "batch" then
        for _ = 1, tonumber(rest) do hostLine(readLine()) end
    elseif cmd == "clock" then
        clockOffset = clockOffset + tonumber(rest)
    elseif cmd == "ev" then
        local ev = { n = 0 }
        for token in rest:gmatch("%S+") do
            ev.n = ev.n + 1
            ev[ev.n] = decodeToken(token)
        end
        push(ev)
    elseif cmd == "closed" then
        local ws = websockets[tonumber(rest)]
        if ws then ws.closed = true end
    elseif cmd == "attach" or cmd == "detach" then
        -- (lua-files) the host attaches "NAME=KIND" or detaches "NAME", with
        -- the event CC queues for it
        push({ cmd == "attach" and "peripheral" or "peripheral_detach", hostAttach(cmd == "attach", rest), n = 2 })
    elseif cmd == "heap" then
        real.collectgarbage("collect")
        real.collectgarbage("collect")
        emit(("heap %d"):format(math.floor(real.collectgarbage("count"))))
    end
end

local function readHost()
    return hostLine(readLine())
end

local function pop()
    if cfg.syncHost then
        emit("sync")
        while true do
            local line = readLine()
            if line == "go" then break end
            hostLine(line)
        end
    end
    while qHead > qTail do readHost() end
    local ev = queue[qHead]
    queue[qHead] = nil
    qHead = qHead + 1
    return ev
end

---------------------------------------------------------------------------
-- Colours
---------------------------------------------------------------------------

local names = {
    "white", "orange", "magenta", "lightBlue", "yellow", "lime", "pink", "grey",
    "lightGrey", "cyan", "purple", "blue", "brown", "green", "red", "black",
}
colours = {}
for i, name in ipairs(names) do colours[name] = 2 ^ (i - 1) end
colors = {}
for k, v in pairs(colours) do colors[k] = v end
colors.gray, colors.lightGray = colours.grey, colours.lightGrey
colors.grey, colors.lightGrey = nil, nil

local PALETTE = {
    0xF0F0F0, 0xF2B233, 0xE57FD8, 0x99B2F2, 0xDEDE6C, 0x7FCC19, 0xF2B2CC, 0x4C4C4C,
    0x999999, 0x4C99B2, 0xB266E5, 0x3366CC, 0x7F664C, 0x57A64E, 0xCC4C4C, 0x111111,
}
local function paletteIndex(c)
    for i = 1, 16 do
        if c == 2 ^ (i - 1) then return i end
    end
    error("bad argument #1 (invalid colour)", 3)
end
local function rgb(hexColour)
    return math.floor(hexColour / 65536) % 256 / 255, math.floor(hexColour / 256) % 256 / 255, hexColour % 256 / 255
end

---------------------------------------------------------------------------
-- Terminal: the native screen reports what is written to the host
---------------------------------------------------------------------------

local function checkType(n, v, ...)
    local t = type(v)
    for i = 1, select("#", ...) do
        if t == select(i, ...) then return v end
    end
    error(("bad argument #%d (%s expected, got %s)"):format(n, table.concat({ ... }, " or "), t), 3)
end

local native = {}
do
    local x, y, fg, bg, blink, dirty = 1, 1, colours.white, colours.black, false, false
    local palette = {}
    local function put(text)
        emit("w " .. hex(text))
        x = x + #text
        dirty = true
    end
    -- TermMethods.write takes a Coerced<String>: any value is turned into
    -- text (nil writes "nil"), it never raises.
    function native.write(text)
        put(tostring(text))
    end
    function native.blit(text, tfg, tbg)
        checkType(1, text, "string")
        checkType(2, tfg, "string")
        checkType(3, tbg, "string")
        if #text ~= #tfg or #text ~= #tbg then error("Arguments must be the same length", 2) end
        put(text)
    end
    function native.setCursorPos(nx, ny)
        checkType(1, nx, "number")
        checkType(2, ny, "number")
        nx, ny = math.floor(nx), math.floor(ny)
        if ny ~= y and (ny == y + 1 or dirty) then
            emit("nl")
            dirty = false
        end
        x, y = nx, ny
    end
    function native.getCursorPos() return x, y end
    function native.scroll(n)
        checkType(1, n, "number")
        if n > 0 or dirty then
            emit("nl")
            dirty = false
        end
    end
    function native.clear()
        if dirty then emit("nl") end
        dirty = false
    end
    function native.clearLine() end
    function native.getSize() return cfg.width, cfg.height end
    function native.isColour() return cfg.colour end
    function native.setCursorBlink(b) blink = checkType(1, b, "boolean") end
    function native.getCursorBlink() return blink end
    function native.setTextColour(c)
        checkType(1, c, "number")
        paletteIndex(c)
        fg = c
        emit("fg " .. c)
    end
    function native.getTextColour() return fg end
    function native.setBackgroundColour(c)
        checkType(1, c, "number")
        paletteIndex(c)
        bg = c
        emit("bg " .. c)
    end
    function native.getBackgroundColour() return bg end
    function native.setPaletteColour(c, r, g, b)
        local i = paletteIndex(c)
        if g == nil then r, g, b = rgb(r) end
        palette[i] = { r, g, b }
    end
    function native.getPaletteColour(c)
        local i = paletteIndex(c)
        if palette[i] then return table.unpack(palette[i]) end
        return rgb(PALETTE[i])
    end
    native.isColor, native.setTextColor, native.getTextColor = native.isColour, native.setTextColour, native.getTextColour
    native.setBackgroundColor, native.getBackgroundColor = native.setBackgroundColour, native.getBackgroundColour
    native.setPaletteColor, native.getPaletteColor = native.setPaletteColour, native.getPaletteColour
end

term = {}
do
    local target = native
    function term.redirect(t)
        checkType(1, t, "table")
        if t == term then
            error("term is not a recommended redirect target, try term.current() instead", 2)
        end
        for k, v in pairs(native) do
            if type(v) == "function" and type(t[k]) ~= "function" then
                t[k] = function() error("Redirect object is missing method " .. k .. ".", 2) end
            end
        end
        local old = target
        target = t
        return old
    end
    function term.current() return target end
    function term.native() return native end
    function term.nativePaletteColour(c) return rgb(PALETTE[paletteIndex(c)]) end
    term.nativePaletteColor = term.nativePaletteColour
    for k, v in pairs(native) do
        if type(v) == "function" then
            term[k] = function(...) return target[k](...) end
        end
    end
end

-- write wraps words at the terminal's width the way CC's write does.
function write(text)
    checkType(1, text, "string", "number")
    text = tostring(text)
    local w, h = term.getSize()
    local x, y = term.getCursorPos()
    local lines = 0
    local function newLine()
        if y + 1 <= h then
            term.setCursorPos(1, y + 1)
        else
            term.setCursorPos(1, h)
            term.scroll(1)
        end
        x, y = term.getCursorPos()
        lines = lines + 1
    end
    local pos = 1
    while pos <= #text do
        local space = text:match("^[ \t]+", pos)
        if space then
            term.write(space)
            x, y = term.getCursorPos()
            pos = pos + #space
        elseif text:sub(pos, pos) == "\n" then
            newLine()
            pos = pos + 1
        else
            local word = text:match("^[^ \t\n]+", pos)
            pos = pos + #word
            if #word > w then
                while #word > 0 do
                    if x > w then newLine() end
                    term.write(word)
                    word = word:sub(w - x + 2)
                    x, y = term.getCursorPos()
                end
            else
                if x + #word - 1 > w then newLine() end
                term.write(word)
                x, y = term.getCursorPos()
            end
        end
    end
    return lines
end

function print(...)
    local n = select("#", ...)
    local parts = {}
    for i = 1, n do parts[i] = tostring((select(i, ...))) end
    return write(table.concat(parts, "\t") .. "\n")
end

function printError(...)
    local old
    if term.isColour() then
        old = term.getTextColour()
        term.setTextColour(colours.red)
    end
    print(...)
    if old then term.setTextColour(old) end
end

do
    local baseWrite = write
    local function fileWrite(self, ...)
        for i = 1, select("#", ...) do baseWrite(select(i, ...)) end
        return self
    end
    io = { stdout = { write = fileWrite } }
    function io.write(...) return fileWrite(io.stdout, ...) end
end

---------------------------------------------------------------------------
-- os, timers, "Too long without yielding"
---------------------------------------------------------------------------

-- CC's watchdog (TimeoutState: TIMEOUT = 7000 ms, ABORT_TIMEOUT = 1500 ms)
-- is time, not instructions: 7 s after the computer was resumed for an event
-- the soft-abort flag is set and Cobalt's interrupt handler throws "Too long
-- without yielding" once (CobaltLuaMachine); if the computer still has not
-- yielded 1.5 s later, ComputerExecutor hard-aborts it: displayFailure("Error
-- running computer", ABORT_MESSAGE) and a shutdown, which drops its sockets.
-- Measured here with os.clock (the CPU time of this process: a spinning chunk
-- uses it all, and a busy test machine does not steal it).
local TLWY = "Too long without yielding"
local resumeStart, abortThrown, inProgram = 0, false, false

-- displayFailure: the message and the reason in red, then a line in white
-- (ComputerExecutor, CC:Tweaked 1.113).
local function hardAbort()
    emit("fg 16384")
    emit("w " .. hex("Error running computer"))
    emit("nl")
    emit("w " .. hex(TLWY))
    emit("nl")
    emit("fg 1")
    emit("w " .. hex("ComputerCraft may be installed incorrectly"))
    emit("nl")
    exit(3)
end

local function tlwyHook()
    if not inProgram then return end
    local used = real.clock() - resumeStart
    if abortThrown then
        if used > cfg.watchdog + cfg.hardAbort then hardAbort() end
    elseif used > cfg.watchdog then
        abortThrown = true -- thrown once per resume of the computer
        -- CobaltLuaMachine throws new LuaError(ABORT_MESSAGE): level 1, so
        -- Cobalt's LuaError.fillTraceback puts the position of the running
        -- Lua function in front ("/test.lua:1: Too long without yielding" in
        -- CC's own ComputerTest); level 2 here is that function.
        error(TLWY, 2)
    end
end

-- Lua keeps a hook function per coroutine, so every coroutine the program
-- makes gets the hook too.
do
    local create, resume = coroutine.create, coroutine.resume
    function coroutine.create(fn)
        local co = create(fn)
        real.sethook(co, tlwyHook, "", 1000)
        return co
    end
    function coroutine.wrap(fn)
        local co = coroutine.create(fn)
        return function(...)
            local res = table.pack(resume(co, ...))
            if not res[1] then error(res[2], 0) end
            return table.unpack(res, 2, res.n)
        end
    end
end

local nextTimer = 0
os = {
    getComputerID = function() return cfg.id end,
    getComputerLabel = function() return cfg.label end,
    setComputerLabel = function(label) cfg.label = checkType(1, label, "string", "nil") end,
    queueEvent = function(name, ...)
        checkType(1, name, "string")
        push(table.pack(name, ...))
    end,
    startTimer = function(seconds)
        checkType(1, seconds, "number")
        nextTimer = nextTimer + 1
        emit(("timer %d %s"):format(nextTimer, string.format("%.17g", seconds)))
        return nextTimer
    end,
    cancelTimer = function(id) emit("cancel-timer " .. tostring(id)) end,
    clock = function() return real.clock() * cfg.tickRate + clockOffset end,
    time = function() return real.time() % 86400 / 3600 end,
    -- wall time in CC; here the clock the watchdog counts (CPU time of this process), from the
    -- real time at start, so it has CC's millisecond steps
    epoch = function() return math.floor((epochBase + real.clock()) * 1000) end,
    day = function() return 1 end,
    version = function() return "CraftOS 1.9" end,
    shutdown = function() exit(0) end,
    reboot = function() exit(0) end,
}
os.computerID, os.computerLabel = os.getComputerID, os.getComputerLabel

function os.pullEventRaw(filter)
    return coroutine.yield(filter)
end

function os.pullEvent(filter)
    local ev = table.pack(os.pullEventRaw(filter))
    if ev[1] == "terminate" then error("Terminated", 0) end
    return table.unpack(ev, 1, ev.n)
end

function sleep(seconds)
    local timer = os.startTimer(seconds or 0)
    repeat
        local _, id = os.pullEvent("timer")
    until id == timer
end
os.sleep = sleep

---------------------------------------------------------------------------
-- parallel: CC's semantics (filters, terminate to everyone, errors rethrown)
---------------------------------------------------------------------------

parallel = {}
do
    local function run(fns, stopWhenLiving)
        local cos, filters = {}, {}
        for i, fn in ipairs(fns) do
            if type(fn) ~= "function" then
                error(("bad argument #%d (function expected, got %s)"):format(i, type(fn)), 3)
            end
            cos[i] = coroutine.create(fn)
        end
        local living = #cos
        if living == 0 then return 0 end
        local ev = { n = 0 }
        while true do
            for i = 1, #fns do
                local co = cos[i]
                if co and (filters[co] == nil or filters[co] == ev[1] or ev[1] == "terminate") then
                    local ok, res = coroutine.resume(co, table.unpack(ev, 1, ev.n))
                    if not ok then error(res, 0) end
                    filters[co] = res
                    if coroutine.status(co) == "dead" then
                        cos[i] = nil
                        living = living - 1
                        if living <= stopWhenLiving then return i end
                    end
                end
            end
            ev = table.pack(os.pullEventRaw())
        end
    end
    function parallel.waitForAny(...)
        local fns = { ... }
        return run(fns, #fns - 1)
    end
    function parallel.waitForAll(...)
        run({ ... }, 0)
    end
end

---------------------------------------------------------------------------
-- window: CC's rom/apis/window.lua, on every computer. The buffer, cursor,
-- colours, getLine, visibility and reposition behave as CC documents them.
-- Only the drawing differs: the native screen here is a stream, so a
-- visible window passes on what is written (at its place on the parent)
-- instead of redrawing whole lines as CC's does.
---------------------------------------------------------------------------

window = {}
do
    local HEXES = "0123456789abcdef"
    local function hexOf(c)
        for i = 0, 15 do
            if 2 ^ i == c then return HEXES:sub(i + 1, i + 1) end
        end
        return "0"
    end

    function window.create(parent, nx, ny, width, height, startVisible)
        checkType(1, parent, "table")
        checkType(2, nx, "number")
        checkType(3, ny, "number")
        checkType(4, width, "number")
        checkType(5, height, "number")
        checkType(6, startVisible, "boolean", "nil")
        if parent == term then
            error("term is not a recommended window parent, try term.current() instead", 2)
        end
        local visible = startVisible ~= false
        local cx, cy, blink = 1, 1, false
        local fg, bg = colours.white, colours.black
        local lines = {}
        local function blank(y)
            lines[y] = { (" "):rep(width), hexOf(fg):rep(width), hexOf(bg):rep(width) }
        end
        for y = 1, height do blank(y) end

        local w = {}
        local function place()
            if cx >= 1 and cy >= 1 and cx <= width and cy <= height then
                parent.setCursorPos(nx + cx - 1, ny + cy - 1)
            else
                parent.setCursorPos(0, 0)
            end
        end
        local function blitAt(text, tfg, tbg)
            local from, to = cx, cx + #text - 1
            if cy >= 1 and cy <= height and from <= width and to >= 1 then
                local a, b = math.max(1, from), math.min(width, to)
                local i, j = a - from + 1, b - from + 1
                local line = lines[cy]
                for k, part in ipairs({ text, tfg, tbg }) do
                    line[k] = line[k]:sub(1, a - 1) .. part:sub(i, j) .. line[k]:sub(b + 1)
                end
                if visible then
                    parent.setCursorPos(nx + a - 1, ny + cy - 1)
                    parent.blit(text:sub(i, j), tfg:sub(i, j), tbg:sub(i, j))
                end
            end
            cx = to + 1
            if visible then place() end
        end
        function w.write(text)
            text = tostring(text)
            blitAt(text, hexOf(fg):rep(#text), hexOf(bg):rep(#text))
        end
        function w.blit(text, tfg, tbg)
            checkType(1, text, "string")
            checkType(2, tfg, "string")
            checkType(3, tbg, "string")
            if #tfg ~= #text or #tbg ~= #text then error("Arguments must be the same length", 2) end
            blitAt(text, tfg:lower(), tbg:lower())
        end
        function w.clear()
            for y = 1, height do blank(y) end
            if visible then parent.clear() place() end
        end
        function w.clearLine()
            if cy >= 1 and cy <= height then
                blank(cy)
                if visible then place() end
            end
        end
        function w.getCursorPos() return cx, cy end
        function w.setCursorPos(x, y)
            checkType(1, x, "number")
            checkType(2, y, "number")
            cx, cy = math.floor(x), math.floor(y)
            if visible then place() end
        end
        function w.setCursorBlink(b)
            blink = checkType(1, b, "boolean")
            if visible then parent.setCursorBlink(b) end
        end
        function w.getCursorBlink() return blink end
        function w.isColour() return parent.isColour() end
        function w.getSize() return width, height end
        function w.scroll(n)
            checkType(1, n, "number")
            n = math.floor(n)
            if n == 0 then return end
            local moved = {}
            for y = 1, height do moved[y] = lines[y + n] end
            lines = moved
            for y = 1, height do if not lines[y] then blank(y) end end
            if visible then parent.scroll(n) end
        end
        function w.setTextColour(c)
            checkType(1, c, "number")
            paletteIndex(c)
            fg = c
            if visible then parent.setTextColour(c) end
        end
        function w.getTextColour() return fg end
        function w.setBackgroundColour(c)
            checkType(1, c, "number")
            paletteIndex(c)
            bg = c
            if visible then parent.setBackgroundColour(c) end
        end
        function w.getBackgroundColour() return bg end
        function w.setPaletteColour(...) return parent.setPaletteColour(...) end
        function w.getPaletteColour(...) return parent.getPaletteColour(...) end
        -- The window's own methods, beyond what a terminal has:
        function w.getLine(y)
            checkType(1, y, "number")
            local line = lines[y]
            if not line then error("Line is out of range.", 2) end
            return line[1], line[2], line[3]
        end
        function w.setVisible(v)
            checkType(1, v, "boolean")
            visible = v
            if v then place() end
        end
        function w.isVisible() return visible end
        function w.redraw() if visible then place() end end
        function w.restoreCursor()
            if visible then
                parent.setCursorBlink(blink)
                parent.setTextColour(fg)
                place()
            end
        end
        function w.getPosition() return nx, ny end
        function w.reposition(x, y, newWidth, newHeight, newParent)
            checkType(1, x, "number")
            checkType(2, y, "number")
            checkType(3, newWidth, "number", "nil")
            checkType(4, newHeight, "number", "nil")
            checkType(5, newParent, "table", "nil")
            nx, ny = x, y
            if newParent then parent = newParent end
            if newWidth and newHeight then
                local old = lines
                lines = {}
                for row = 1, newHeight do
                    local line = old[row]
                    if line then
                        local pad = newWidth - #line[1]
                        if pad >= 0 then
                            lines[row] = { line[1] .. (" "):rep(pad), line[2] .. hexOf(fg):rep(pad), line[3] .. hexOf(bg):rep(pad) }
                        else
                            lines[row] = { line[1]:sub(1, newWidth), line[2]:sub(1, newWidth), line[3]:sub(1, newWidth) }
                        end
                    end
                end
                width, height = newWidth, newHeight
                for row = 1, height do if not lines[row] then blank(row) end end
            end
        end
        w.isColor, w.setTextColor, w.getTextColor = w.isColour, w.setTextColour, w.getTextColour
        w.setBackgroundColor, w.getBackgroundColor = w.setBackgroundColour, w.getBackgroundColour
        w.setPaletteColor, w.getPaletteColor = w.setPaletteColour, w.getPaletteColour
        return w
    end
end

---------------------------------------------------------------------------
-- fs, rooted in cfg.root
---------------------------------------------------------------------------

-- CC's FileSystem.sanitizePath (core/filesystem/FileSystem.java): "\\" is
-- "/", control characters and " : < > ? | are dropped (and * unless
-- wildcards are allowed), each part is trimmed, empty parts, "." and "..."
-- (or more dots) are skipped, ".." cancels the part before it and stays when
-- there is none (so a path above the root keeps its leading ".."), and a part
-- is cut at 255 characters. It never fails.
local function sanitize(path, wildcards)
    path = path:gsub("\\", "/"):gsub(wildcards and '[%z\1-\31":<>?|]' or '[%z\1-\31":<>?|*]', "")
    local parts = {}
    for part in (path .. "/"):gmatch("([^/]*)/") do
        part = part:match("^%s*(.-)%s*$")
        if part == "" or part == "." or part:match("^%.%.%.+$") then
            -- redundant
        elseif part == ".." then
            if #parts > 0 and parts[#parts] ~= ".." then parts[#parts] = nil else parts[#parts + 1] = ".." end
        else
            if #part >= 255 then part = part:sub(1, 255):match("^(.-)%s*$") end
            parts[#parts + 1] = part
        end
    end
    return table.concat(parts, "/")
end

-- A path above the root is in no mount: FileSystem.getMount raises
-- "/<path>: Invalid Path" for every operation that needs one (open, list,
-- getSize, makeDir, delete, move, getDrive, getFreeSpace ...), while FSAPI's
-- exists, isDir and isReadOnly catch it and answer false, and combine,
-- getName and getDir only sanitize.
local function aboveRoot(p) return p == ".." or p:sub(1, 3) == "../" end
-- level: as error's, seen from the function that calls clean (2: its caller).
local function clean(path, level)
    local p = sanitize(path)
    if aboveRoot(p) then error("/" .. p .. ": Invalid Path", level + 1) end
    return p
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function realPath(path) return cfg.root .. "/" .. clean(path, 3) end
local function sh(cmd)
    local ok = real.execute(cmd)
    return ok == true or ok == 0
end

fs = {}
-- FSAPI.combine / getName / getDir and FileSystem.getName / getDirectory:
-- text only, no mount, so no errors ("../x" stays "../x").
function fs.combine(...)
    local parts = {}
    for i = 1, select("#", ...) do
        local part = sanitize(checkType(i, (select(i, ...)), "string"), true)
        if part ~= "" then parts[#parts + 1] = part end
    end
    return sanitize(table.concat(parts, "/"), true)
end
function fs.getName(path)
    local p = sanitize(checkType(1, path, "string"), true)
    if p == "" then return "root" end
    return p:match("([^/]+)$")
end
function fs.getDir(path)
    local p = sanitize(checkType(1, path, "string"), true)
    if p == "" then return ".." end
    return p:match("^(.*)/[^/]+$") or ""
end
-- FSAPI.exists / isDir / isReadOnly: false for a path in no mount.
local function inRom(p) return p == "rom" or p:sub(1, 4) == "rom/" end
function fs.exists(path)
    local p = sanitize(checkType(1, path, "string"))
    return not aboveRoot(p) and sh("test -e " .. quote(cfg.root .. "/" .. p))
end
function fs.isDir(path)
    local p = sanitize(checkType(1, path, "string"))
    return not aboveRoot(p) and sh("test -d " .. quote(cfg.root .. "/" .. p))
end
function fs.isReadOnly(path)
    local p = sanitize(checkType(1, path, "string"))
    return not aboveRoot(p) and inRom(p)
end
-- rom/ is read-only, as CC's ROM mount is (the message CC gives).
local function writable(path, level)
    local p = clean(path, level + 1)
    if inRom(p) then error("/" .. p .. ": Access denied", level + 1) end
    return p
end
function fs.makeDir(path)
    writable(path, 2)
    if fs.exists(path) and not fs.isDir(path) then error("/" .. clean(path, 2) .. ": File exists", 2) end
    sh("mkdir -p " .. quote(realPath(path)))
end
function fs.delete(path)
    writable(path, 2)
    sh("rm -rf " .. quote(realPath(path)))
end
function fs.getSize(path)
    local p = clean(path, 2)
    if not fs.exists(p) then error("/" .. p .. ": No such file", 2) end
    if fs.isDir(path) then return 0 end
    local f = real.open(realPath(path), "rb")
    local n = f:seek("end")
    f:close()
    return n
end
function fs.getFreeSpace(path)
    clean(path, 2)
    return cfg.freeSpace or 1000000
end
function fs.getDrive(path)
    local p = clean(path, 2)
    if not fs.exists(p) then return nil end
    if inRom(p) then return "rom" end
    return "hdd"
end
function fs.move(from, to)
    local a, b = writable(from, 2), writable(to, 2)
    if not fs.exists(a) then error("/" .. a .. ": No such file", 2) end
    if fs.exists(b) then error("/" .. b .. ": File exists", 2) end
    local dir = fs.getDir(b)
    if dir ~= "" and not fs.isDir(dir) then sh("mkdir -p " .. quote(realPath(dir))) end
    sh("mv " .. quote(realPath(a)) .. " " .. quote(realPath(b)))
end
function fs.list(path)
    local p = clean(path, 2)
    if not fs.isDir(p) then error("/" .. p .. ": Not a directory", 2) end
    local p = real.popen("ls -A " .. quote(realPath(path)))
    local out = {}
    for line in p:lines() do out[#out + 1] = line end
    p:close()
    table.sort(out)
    return out
end
function fs.open(path, mode)
    checkType(1, path, "string")
    checkType(2, mode, "string")
    -- FSAPI.open returns the FileSystemException's message: "Invalid Path"
    -- for a path above the root (CraftOS-PC says "No such file" there), and
    -- a folder is "Not a file".
    local p = sanitize(path)
    if aboveRoot(p) then return nil, "/" .. p .. ": Invalid Path" end
    if fs.isDir(p) then return nil, "/" .. p .. ": Not a file" end
    if mode:sub(1, 1) ~= "r" and inRom(p) then return nil, "/" .. p .. ": Access denied" end
    if mode:sub(1, 1) ~= "r" then
        local dir = fs.getDir(p)
        if dir ~= "" and not fs.isDir(dir) then sh("mkdir -p " .. quote(realPath(dir))) end
    end
    local f = real.open(realPath(p), (mode:gsub("b", "")) .. "b")
    if not f then return nil, "/" .. p .. ": No such file" end
    local h, closed = {}, false
    local function check() if closed then error("attempt to use a closed file", 3) end end
    function h.readAll() check() return f:read("*a") end
    function h.readLine(keep) check() return f:read(keep and "*L" or "*l") end
    function h.read(n) check() return f:read(n or 1) end
    function h.write(s) check() f:write(tostring(s)) end
    function h.writeLine(s) check() f:write(tostring(s), "\n") end
    function h.flush() check() f:flush() end
    function h.close() check() closed = true f:close() end
    function h.seek(whence, offset) check() return f:seek(whence or "cur", offset or 0) end
    return h
end

---------------------------------------------------------------------------
-- textutils, reproducing CC's documented behaviour (and quirks)
---------------------------------------------------------------------------

textutils = {}
local function emptyMarker(str, name)
    return setmetatable({}, {
        __newindex = function() error("attempt to mutate textutils." .. name, 2) end,
        __tostring = function() return str end,
    })
end
textutils.empty_json_array = emptyMarker("[]", "empty_json_array")
textutils.json_null = emptyMarker("null", "json_null")

local LUA_KEYWORDS = {}
for w in ("and break do else elseif end false for function goto if in local nil not or repeat return then true until while"):gmatch("%a+") do
    LUA_KEYWORDS[w] = true
end

local function numberText(n)
    -- CC runs on Java doubles: nan, inf and -inf print as these words.
    if n ~= n then return "nan" end
    if n == math.huge then return "inf" end
    if n == -math.huge then return "-inf" end
    return tostring(n)
end

local function serialiseLua(v, seen, indent, compact)
    local t = type(v)
    if t == "table" then
        if seen[v] then error("Cannot serialize table with " .. (seen[v] == "open" and "recursive" or "repeated") .. " entries", 0) end
        seen[v] = "open"
        local out
        if next(v) == nil then
            out = "{}"
        else
            local nl, sub, eq = compact and "" or "\n", compact and "" or indent .. "  ", compact and "=" or " = "
            local parts, done = { "{" .. nl }, {}
            for i, item in ipairs(v) do
                done[i] = true
                parts[#parts + 1] = sub .. serialiseLua(item, seen, sub, compact) .. "," .. nl
            end
            for k, item in pairs(v) do
                if not done[k] then
                    local key
                    if type(k) == "string" and not LUA_KEYWORDS[k] and k:match("^[%a_][%w_]*$") then
                        key = k .. eq
                    else
                        key = (compact and "[" or "[ ") .. serialiseLua(k, seen, sub, compact) .. (compact and "]=" or " ] = ")
                    end
                    parts[#parts + 1] = sub .. key .. serialiseLua(item, seen, sub, compact) .. "," .. nl
                end
            end
            parts[#parts + 1] = (compact and "" or indent) .. "}"
            out = table.concat(parts)
        end
        seen[v] = "done"
        return out
    elseif t == "string" then
        return string.format("%q", v)
    elseif t == "number" then
        if v ~= v then return "0/0" end
        if v == math.huge then return "1/0" end
        if v == -math.huge then return "-1/0" end
        return tostring(v)
    elseif t == "boolean" or t == "nil" then
        return tostring(v)
    end
    error("Cannot serialize type " .. t, 0)
end

-- pagedPrint as in CC's textutils.lua: print through a copy of the current
-- terminal whose scroll waits for a key press once free_lines (default 0)
-- lines have scrolled ("Press any key to continue" on the bottom row).
function textutils.pagedPrint(text, free_lines)
    local oldTerm = term.current()
    local newTerm = {}
    for k, v in pairs(oldTerm) do newTerm[k] = v end
    local free = free_lines or 0
    newTerm.scroll = function(n)
        for _ = 1, n do
            oldTerm.scroll(1)
            if free <= 0 then
                local _, h = oldTerm.getSize()
                oldTerm.setCursorPos(1, h)
                oldTerm.write("Press any key to continue")
                os.pullEvent("key")
                oldTerm.clearLine()
                oldTerm.setCursorPos(1, h)
            else
                free = free - 1
            end
        end
    end
    term.redirect(newTerm)
    local ok, res = pcall(print, text)
    term.redirect(oldTerm)
    if not ok then error(res, 0) end
    return res
end

function textutils.serialize(v, opts)
    return serialiseLua(v, {}, "", opts and opts.compact)
end
textutils.serialise = textutils.serialize

function textutils.unserialize(s)
    checkType(1, s, "string")
    local fn = load("return " .. s, "unserialize", "t", {})
    if fn then
        local ok, v = pcall(fn)
        if ok then return v end
    end
    return nil
end
textutils.unserialise = textutils.unserialize

local JSON_MAP = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
local function byteEscape(c) return JSON_MAP[c] or ("\\u00%02X"):format(c:byte()) end

-- Strict UTF-8 decoding, like the utf8 library CC's unicode_strings uses.
local function utf8Codes(s)
    local out, i = {}, 1
    while i <= #s do
        local b = s:byte(i)
        local len, cp
        if b < 0x80 then len, cp = 1, b
        elseif b >= 0xC2 and b <= 0xDF then len, cp = 2, b - 0xC0
        elseif b >= 0xE0 and b <= 0xEF then len, cp = 3, b - 0xE0
        elseif b >= 0xF0 and b <= 0xF4 then len, cp = 4, b - 0xF0
        else error("invalid UTF-8 code", 0) end
        for j = 1, len - 1 do
            local c = s:byte(i + j)
            if not c or c < 0x80 or c > 0xBF then error("invalid UTF-8 code", 0) end
            cp = cp * 64 + (c - 0x80)
        end
        out[#out + 1] = cp
        i = i + len
    end
    return out
end

local function utf8Char(cp)
    if cp < 0x80 then return string.char(cp) end
    if cp < 0x800 then return string.char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64) end
    if cp < 0x10000 then
        return string.char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
    end
    return string.char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64,
        0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

local function jsonString(s, opts)
    if opts.unicode_strings and s:find("[\128-\255]") then
        local out = '"'
        for _, cp in ipairs(utf8Codes(s)) do
            -- Built up one character at a time, as CC does.
            if cp > 0xFFFF then
                local v = cp - 0x10000
                out = out .. ("\\u%04X\\u%04X"):format(0xD800 + math.floor(v / 1024), 0xDC00 + v % 1024)
            elseif cp < 0x80 and JSON_MAP[string.char(cp)] then
                out = out .. JSON_MAP[string.char(cp)]
            elseif cp < 0x20 or cp >= 0x7F then
                out = out .. ("\\u%04X"):format(cp)
            else
                out = out .. string.char(cp)
            end
        end
        return out .. '"'
    end
    return '"' .. s:gsub('[%c"\\]', byteEscape):gsub("[\128-\255]", byteEscape) .. '"'
end

local function jsonValue(v, seen, opts)
    if v == textutils.empty_json_array then return "[]" end
    if v == textutils.json_null then return "null" end
    local t = type(v)
    if t == "table" then
        if seen[v] ~= nil then
            error("Cannot serialize table with " .. (seen[v] and "recursive" or "repeated") .. " entries", 0)
        end
        seen[v] = true
        local out
        if next(v) == nil then
            out = "{}"
        else
            local obj, arr, largest = {}, {}, 0
            for k, item in pairs(v) do
                if type(k) == "string" then
                    local key = opts.nbt_style and k or jsonString(k, opts)
                    obj[#obj + 1] = key .. ":" .. jsonValue(item, seen, opts)
                elseif type(k) == "number" and k > largest then
                    largest = k
                end
            end
            for i = 1, largest do
                arr[#arr + 1] = v[i] == nil and "null" or jsonValue(v[i], seen, opts)
            end
            if #obj > 0 or #arr == 0 then out = "{" .. table.concat(obj, ",") .. "}"
            else out = "[" .. table.concat(arr, ",") .. "]" end
        end
        if opts.allow_repetitions then seen[v] = nil else seen[v] = false end
        return out
    elseif t == "string" then
        return jsonString(v, opts)
    elseif t == "number" then
        return numberText(v)
    elseif t == "boolean" then
        return tostring(v)
    end
    error("Cannot serialize type " .. t, 0)
end

function textutils.serializeJSON(v, opts)
    checkType(1, v, "table", "string", "number", "boolean")
    if cfg.unicodeJson then
        checkType(2, opts, "table", "boolean", "nil")
    else
        checkType(2, opts, "boolean", "nil") -- before CC:T 1.106 only nbt_style existed
    end
    if type(opts) == "boolean" then opts = { nbt_style = opts } end
    return jsonValue(v, {}, opts or {})
end
textutils.serialiseJSON = textutils.serializeJSON

do
    local JsonError = {}
    local function fail(pos, msg, ...)
        if select("#", ...) > 0 then msg = msg:format(...) end
        error(setmetatable({ pos = pos, msg = msg }, JsonError))
    end
    local function skip(s, pos)
        local _, last = s:find("^[ \n\r\t]+", pos)
        return last and last + 1 or pos
    end
    local function expected(pos, actual, what)
        if actual == "" then actual = "end of input" else actual = ("%q"):format(actual) end
        fail(pos, "Unexpected %s, expected %s.", actual, what)
    end
    local UNESCAPE = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["/"] = "/", ["\\"] = "\\" }

    local function parseString(s, pos)
        local buf = {}
        while true do
            local c = s:sub(pos, pos)
            if c == "" then fail(pos, "Unexpected end of input, expected '\"'.") end
            if c == '"' then break end
            if c == "\\" then
                local e = s:sub(pos + 1, pos + 1)
                if e == "" then fail(pos, "Unexpected end of input, expected escape sequence.") end
                if e == "u" then
                    local digits = s:match("^%x%x%x%x", pos + 2)
                    if not digits then fail(pos, "Malformed unicode escape %q.", s:sub(pos + 2, pos + 5)) end
                    buf[#buf + 1] = utf8Char(tonumber(digits, 16))
                    pos = pos + 6
                else
                    if not UNESCAPE[e] then fail(pos + 1, "Unknown escape character %q.", e) end
                    buf[#buf + 1] = UNESCAPE[e]
                    pos = pos + 2
                end
            elseif c >= " " then
                local _, last = s:find('^[^"\\%c]+', pos)
                last = last or pos
                buf[#buf + 1] = s:sub(pos, last)
                pos = last + 1
            else
                fail(pos + 1, "Unescaped whitespace %q.", c)
            end
        end
        return table.concat(buf), pos + 1
    end

    local parseValue
    function parseValue(s, pos, opts)
        local c = s:sub(pos, pos)
        if c == '"' then
            return parseString(s, pos + 1)
        elseif c == "-" or (c >= "0" and c <= "9") then
            local _, last, text = s:find("^(-?%d+%.?%d*[eE]?[+-]?%d*)", pos)
            -- Like CC: with no match at all (a lone "-") formatting the
            -- message itself fails, so this raises instead of nil, message.
            local n = tonumber(text)
            if not n then fail(pos, "Malformed number %q.", text) end
            return n, last + 1
        elseif c == "t" and s:sub(pos + 1, pos + 3) == "rue" then
            return true, pos + 4
        elseif c == "f" and s:sub(pos + 1, pos + 4) == "alse" then
            return false, pos + 5
        elseif c == "n" and s:sub(pos + 1, pos + 3) == "ull" then
            if opts.parse_null then return textutils.json_null, pos + 4 end
            return nil, pos + 4
        elseif c == "{" then
            local obj = {}
            pos = skip(s, pos + 1)
            c = s:sub(pos, pos)
            if c == "" then fail(pos, "Unexpected end of input, expected '}'.") end
            if c == "}" then return obj, pos + 1 end
            while true do
                if c ~= '"' then expected(pos, c, "object key") end
                local key, value
                key, pos = parseString(s, pos + 1)
                pos = skip(s, pos)
                c = s:sub(pos, pos)
                if c ~= ":" then expected(pos, c, "':'") end
                value, pos = parseValue(s, skip(s, pos + 1), opts)
                obj[key] = value
                pos = skip(s, pos)
                c = s:sub(pos, pos)
                if c == "}" then break end
                if c ~= "," then expected(pos, c, "',' or '}'") end
                pos = skip(s, pos + 1)
                c = s:sub(pos, pos)
            end
            return obj, pos + 1
        elseif c == "[" then
            local arr, n = {}, 0
            pos = skip(s, pos + 1)
            c = s:sub(pos, pos)
            if c == "" then expected(pos, c, "']'") end
            if c == "]" then
                if opts.parse_empty_array ~= false or not cfg.unicodeJson then return textutils.empty_json_array, pos + 1 end
                return {}, pos + 1
            end
            while true do
                n = n + 1
                arr[n], pos = parseValue(s, pos, opts)
                pos = skip(s, pos)
                c = s:sub(pos, pos)
                if c == "]" then break end
                if c ~= "," then expected(pos, c, "',' or ']'") end
                pos = skip(s, pos + 1)
            end
            return arr, pos + 1
        elseif c == "" then
            fail(pos, "Unexpected end of input.")
        end
        fail(pos, "Unexpected character %q.", c)
    end

    function textutils.unserializeJSON(s, opts)
        checkType(1, s, "string")
        checkType(2, opts, "table", "nil")
        opts = opts or {}
        local ok, v, pos = pcall(parseValue, s, skip(s, 1), opts)
        if not ok then
            if getmetatable(v) == JsonError then
                return nil, ("Malformed JSON at position %d: %s"):format(v.pos, v.msg)
            end
            error(v, 0)
        end
        pos = skip(s, pos)
        if pos <= #s then
            return nil, ("Malformed JSON at position %d: Unexpected trailing character %q."):format(pos, s:sub(pos, pos))
        end
        return v
    end
    textutils.unserialiseJSON = textutils.unserializeJSON
end

---------------------------------------------------------------------------
-- settings
---------------------------------------------------------------------------

settings = {}
do
    local details, values = {}, {}
    local function copy(v)
        if type(v) ~= "table" then return v end
        local out = {}
        for k, x in pairs(v) do out[k] = copy(x) end
        return out
    end
    function settings.define(name, opts)
        checkType(1, name, "string")
        opts = opts or {}
        details[name] = { description = opts.description, default = copy(opts.default), type = opts.type }
    end
    function settings.undefine(name) details[name] = nil end
    function settings.set(name, value)
        checkType(1, name, "string")
        checkType(2, value, "number", "string", "boolean", "table")
        local d = details[name]
        if d and d.type then checkType(2, value, d.type) end
        values[name] = copy(value)
    end
    function settings.get(name, default)
        checkType(1, name, "string")
        if values[name] ~= nil then return copy(values[name]) end
        if default ~= nil then return default end
        return details[name] and copy(details[name].default)
    end
    function settings.getDetails(name)
        local d = copy(details[name]) or {}
        d.value = values[name]
        d.changed = d.value ~= nil
        if d.value == nil then d.value = d.default end
        return d
    end
    function settings.unset(name) values[name] = nil end
    function settings.clear() values = {} end
    function settings.getNames()
        local out, seen = {}, {}
        for k in pairs(details) do out[#out + 1], seen[k] = k, true end
        for k in pairs(values) do if not seen[k] then out[#out + 1] = k end end
        table.sort(out)
        return out
    end
    function settings.load(path)
        local f = fs.open(path or ".settings", "r")
        if not f then return false end
        local t = textutils.unserialize(f.readAll())
        f.close()
        if type(t) ~= "table" then return false end
        for k, v in pairs(t) do
            local d = details[k]
            if type(k) == "string" and (not d or not d.type or type(v) == d.type) then values[k] = v end
        end
        return true
    end
    function settings.save(path)
        -- --settings-save-fails: as when CC cannot open the file (a full disk, a folder in the way)
        if cfg.settingsSaveFails then return false end
        local f = fs.open(path or ".settings", "w")
        if not f then return false end
        f.write(textutils.serialize(values))
        f.close()
        return true
    end
end

---------------------------------------------------------------------------
-- http: the native websocket opens real sockets through the host
---------------------------------------------------------------------------

local handles = {}
local nextSocket = 0

local function newHandle(id)
    local state = websockets[id]
    local h = {}
    function h.send(message, binary)
        if state.closed then error("attempt to use a closed file", 2) end
        message = tostring(message)
        if cfg.maxMessage > 0 and #message > cfg.maxMessage then error("Message is too large", 2) end
        emit(("ws-send %d %s %d"):format(id, hex(message), binary and 1 or 0))
    end
    function h.receive(timeout)
        if state.closed then error("attempt to use a closed file", 2) end
        local timer = timeout and os.startTimer(timeout)
        while true do
            local ev = table.pack(os.pullEvent())
            if ev[1] == "websocket_message" and ev[2] == state.url then return ev[3], ev[4] end
            -- Closed or timed out: CC returns no values at all.
            if ev[1] == "websocket_closed" and ev[2] == state.url and state.closed then return end
            if ev[1] == "timer" and ev[2] == timer then return end
        end
    end
    function h.close()
        if not state.closed then
            state.closed = true
            emit("ws-close " .. id)
        end
    end
    return h
end

function decodeToken(token)
    local kind, value = token:match("^(%a+):(.*)$")
    if token == "nil" then return nil end
    if kind == "s" then return unhex(value) end
    if kind == "n" then return tonumber(value) end
    if kind == "b" then return value == "1" end
    if kind == "h" then
        local id = tonumber(value)
        handles[id] = handles[id] or newHandle(id)
        return handles[id]
    end
    error("cc-emu: bad token " .. token, 0)
end

if cfg.http then
    local nativeHttp = {}
    function nativeHttp.websocket(url)
        if cfg.ws == "disabled" then error("Websocket connections are disabled", 2) end
        checkType(1, url, "string")
        local address = url
        if not address:find("^%a[%w+.-]*://") then address = "ws://" .. address end
        local scheme, host = address:match("^(%a[%w+.-]*)://([^/:]*)")
        if not host or host == "" then return false, "URL malformed" end
        scheme = scheme:lower()
        if scheme ~= "ws" and scheme ~= "wss" then return false, "Invalid scheme '" .. scheme .. "'" end
        if cfg.wsSyncFail then return false, cfg.wsSyncFail end
        -- HTTPAPI.websocket: a Websocket queued on a full ResourceGroup
        -- (CoreConfig.httpMaxWebsockets, 4 by default; pending and open
        -- sockets count until closed) raises this LuaException.
        local open = cfg.websocketsInUse
        for _, w in pairs(websockets) do if not w.closed then open = open + 1 end end
        if cfg.maxWebsockets > 0 and open >= cfg.maxWebsockets then
            error("Too many websockets already open", 2)
        end
        if cfg.wsFail then
            push(table.pack("websocket_failure", url, cfg.wsFail))
            return true
        end
        nextSocket = nextSocket + 1
        websockets[nextSocket] = { url = url, closed = false }
        emit(("ws-open %d %s"):format(nextSocket, hex(address)))
        return true
    end

    http = {}
    if cfg.ws ~= "missing" then
        if cfg.async and cfg.nativeAsync then
            -- CC 1.100: http.websocketAsync is the native function itself
            -- (rom/apis/http/http.lua wraps it only from 1.101).
            http.websocketAsync = nativeHttp.websocket
        elseif cfg.async then
            -- rom/apis/http/http.lua (1.101+): queue websocket_failure for an
            -- immediate failure too.
            function http.websocketAsync(url)
                local ok, err = nativeHttp.websocket(url)
                if not ok then os.queueEvent("websocket_failure", url, err) end
                return ok, err
            end
        end
        function http.websocket(url)
            local ok, err = nativeHttp.websocket(url)
            if not ok then return ok, err end
            while true do
                local name, u, param = os.pullEvent()
                if name == "websocket_success" and u == url then return param end
                if name == "websocket_failure" and u == url then return false, param end
            end
        end
    end
end

---------------------------------------------------------------------------
-- shell and the program runner (CC's BIOS + shell, much simplified)
---------------------------------------------------------------------------

local running = {}
shell = {}
function shell.getRunningProgram() return running[#running] end
function shell.dir() return "" end
-- CC's shell.resolve combines with the current folder (here always the root).
function shell.resolve(path) return fs.combine("", path) end
function shell.resolveProgram(name)
    local p = fs.combine("", name)
    if fs.exists(p) and not fs.isDir(p) then return p end
    if fs.exists(p .. ".lua") then return p .. ".lua" end
    return nil
end

function shell.execute(name, ...)
    local path = shell.resolveProgram(name)
    if not path then
        printError("No such program")
        return false
    end
    local f = fs.open(path, "r")
    local source = f.readAll()
    f.close()
    local env = setmetatable({ shell = shell, arg = { [0] = name, ... } }, { __index = _G })
    -- CC's shell gives every program its own require and package
    -- (rom/programs/shell.lua with cc.require's make): modules are found
    -- next to the program and on the root, as name.lua or name/init.lua.
    env.package = { loaded = {}, path = "?;?.lua;?/init.lua" }
    function env.require(mod)
        if env.package.loaded[mod] ~= nil then return env.package.loaded[mod] end
        local base = mod:gsub("%.", "/")
        for pattern in env.package.path:gmatch("[^;]+") do
            local file = pattern:gsub("%?", base)
            if fs.exists(file) and not fs.isDir(file) then
                local h = fs.open(file, "r")
                local fn, lerr = load(h.readAll(), "@/" .. file, "t", env)
                h.close()
                if not fn then error(lerr, 2) end
                local value = fn(mod)
                if value == nil then value = true end
                env.package.loaded[mod] = value
                return value
            end
        end
        error("module '" .. mod .. "' not found", 2)
    end
    local fn, err = load(source, "@/" .. path, "t", env)
    if not fn then
        printError(err)
        return false
    end
    running[#running + 1] = path
    local ok, res = pcall(fn, ...)
    running[#running] = nil
    if ok then return true end
    if res ~= nil and res ~= "" then printError(tostring(res)) end
    return false
end

-- Words of a command line as CC's shell splits them: runs of characters
-- other than space and tab, and "quoted" runs kept whole (no escapes).
local function shellWords(line)
    local words, quoted = {}, false
    for piece in (line .. '"'):gmatch('(.-)"') do
        if quoted then
            words[#words + 1] = piece
        else
            for w in piece:gmatch("[^ \t]+") do words[#words + 1] = w end
        end
        quoted = not quoted
    end
    return words
end

function shell.run(...)
    local words = shellWords(table.concat({ ... }, " "))
    return shell.execute(table.unpack(words))
end

---------------------------------------------------------------------------
-- Peripherals, keys and read() (lua-tools): a monitor, a chest-like
-- inventory and a modem, attached with --peripheral NAME=KIND
---------------------------------------------------------------------------

-- keys: the GLFW key codes CC:Tweaked uses since Minecraft 1.13.
keys = {
    space = 32, apostrophe = 39, comma = 44, minus = 45, period = 46, slash = 47,
    semicolon = 59, equals = 61, leftBracket = 91, backslash = 92, rightBracket = 93, grave = 96,
    enter = 257, tab = 258, backspace = 259, insert = 260, delete = 261, right = 262, left = 263,
    down = 264, up = 265, pageUp = 266, pageDown = 267, home = 268, ["end"] = 269, capsLock = 280,
    leftShift = 340, leftCtrl = 341, leftAlt = 342, rightShift = 344, rightCtrl = 345, rightAlt = 346,
}
do
    local digits = { "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine" }
    for i, name in ipairs(digits) do keys[name] = 47 + i end
    for i = 0, 25 do keys[string.char(97 + i)] = 65 + i end
    for i = 1, 12 do keys["f" .. i] = 289 + i end
    local names = {}
    for k, v in pairs(keys) do names[v] = k end
    function keys.getName(code) return names[code] end
end

-- read(): the line editing CC's read does for char, paste, enter,
-- backspace, left and right (no history or completion); echoed on the
-- terminal, the cursor blinking while it waits.
function read(replaceChar, _, _, default)
    local line = default or ""
    local pos = #line
    local sx, sy = term.getCursorPos()
    local shown = 0
    local function redraw()
        term.setCursorPos(sx, sy)
        local text = replaceChar and string.rep(replaceChar:sub(1, 1), #line) or line
        term.write(text .. string.rep(" ", math.max(0, shown - #text)))
        shown = #text
        term.setCursorPos(sx + pos, sy)
    end
    term.setCursorBlink(true)
    redraw()
    while true do
        local ev, p1 = os.pullEvent()
        if ev == "char" or ev == "paste" then
            line = line:sub(1, pos) .. p1 .. line:sub(pos + 1)
            pos = pos + #p1
            redraw()
        elseif ev == "key" and p1 == keys.enter then
            break
        elseif ev == "key" and p1 == keys.backspace and pos > 0 then
            line = line:sub(1, pos - 1) .. line:sub(pos + 1)
            pos = pos - 1
            redraw()
        elseif ev == "key" and p1 == keys.left and pos > 0 then
            pos = pos - 1
            redraw()
        elseif ev == "key" and p1 == keys.right and pos < #line then
            pos = pos + 1
            redraw()
        end
    end
    term.setCursorBlink(false)
    term.setCursorPos(sx + #line, sy)
    print()
    return line
end

-- A main-thread method, as CC runs inventory calls: the result comes back
-- in a task_complete event, so the caller yields.
local nextTask = 0
local function onMainThread(fn, ...)
    nextTask = nextTask + 1
    local id = nextTask
    local res = table.pack(pcall(fn, ...))
    os.queueEvent("task_complete", id, res[1], table.unpack(res, 2, res.n))
    while true do
        local ev = table.pack(os.pullEvent("task_complete"))
        if ev[2] == id then
            if ev[3] then return table.unpack(ev, 4, ev.n) end
            error(ev[4], 0)
        end
    end
end

local attached = {} -- name -> { types = {...}, methods = { name = fn } }
local PERIPHERAL_KINDS = {}

function PERIPHERAL_KINDS.monitor()
    local w, h, x, y, scale, blink = 39, 19, 1, 1, 1, false
    local fg, bg = colours.white, colours.black
    local rows = {}
    local function blank() for i = 1, h do rows[i] = string.rep(" ", w) end end
    blank()
    local m = {}
    function m.write(text)
        text = tostring(text)
        if y >= 1 and y <= h then
            local line = rows[y] .. string.rep(" ", math.max(0, x + #text - 1 - w))
            rows[y] = (line:sub(1, x - 1) .. text .. line:sub(x + #text)):sub(1, w)
        end
        x = x + #text
    end
    function m.blit(text, a, b)
        if #text ~= #a or #text ~= #b then error("Arguments must be the same length", 0) end
        m.write(text)
    end
    function m.clear() blank() end
    function m.clearLine() if rows[y] then rows[y] = string.rep(" ", w) end end
    function m.setCursorPos(nx, ny) x, y = checkType(1, nx, "number"), checkType(2, ny, "number") end
    function m.getCursorPos() return x, y end
    function m.getSize() return w, h end
    function m.scroll(n)
        for _ = 1, n do table.remove(rows, 1) rows[h] = string.rep(" ", w) end
    end
    function m.setTextScale(s)
        checkType(1, s, "number")
        if s < 0.5 or s > 5 then error("Expected number in range 0.5-5", 0) end
        scale = s
    end
    function m.getTextScale() return scale end
    function m.isColour() return true end
    function m.setTextColour(c) paletteIndex(c) fg = c end
    function m.getTextColour() return fg end
    function m.setBackgroundColour(c) paletteIndex(c) bg = c end
    function m.getBackgroundColour() return bg end
    function m.setCursorBlink(b) blink = checkType(1, b, "boolean") end
    function m.getCursorBlink() return blink end
    m.isColor, m.setTextColor, m.getTextColor = m.isColour, m.setTextColour, m.getTextColour
    m.setBackgroundColor, m.getBackgroundColor = m.setBackgroundColour, m.getBackgroundColour
    return { types = { "monitor" }, methods = m }
end

local function inventory(kind, slots)
    local inv = {}
    return {
        types = { kind, "inventory" },
        slots = slots,
        methods = {
            size = function() return onMainThread(function() return 27 end) end,
            list = function()
                return onMainThread(function()
                    local out = {}
                    for i, s in pairs(slots) do out[i] = { name = s.name, count = s.count } end
                    return out
                end)
            end,
            getItemDetail = function(slot)
                checkType(1, slot, "number")
                return onMainThread(function()
                    if slot < 1 or slot > 27 then error("Slot out of range (expected between 1 and 27)", 0) end
                    local s = slots[slot]
                    if not s then return nil end
                    return { name = s.name, count = s.count, maxCount = 64, displayName = s.displayName }
                end)
            end,
            pushItems = function(toName, fromSlot, limit, toSlot)
                checkType(1, toName, "string")
                checkType(2, fromSlot, "number")
                return onMainThread(function()
                    local target = attached[toName]
                    if not target or not target.slots then error("Target '" .. toName .. "' does not exist", 0) end
                    local s = slots[fromSlot]
                    if not s then return 0 end
                    local n = math.min(s.count, limit or 64)
                    local dest = toSlot
                    if not dest then
                        for i = 1, 27 do
                            local d = target.slots[i]
                            if not d or (d.name == s.name and d.count < 64) then dest = i break end
                        end
                    end
                    if not dest then return 0 end
                    local d = target.slots[dest]
                    if d and d.name ~= s.name then return 0 end
                    if d then n = math.min(n, 64 - d.count) end
                    target.slots[dest] = { name = s.name, displayName = s.displayName, count = (d and d.count or 0) + n }
                    s.count = s.count - n
                    if s.count == 0 then slots[fromSlot] = nil end
                    return n
                end)
            end,
        },
        inv = inv,
    }
end

function PERIPHERAL_KINDS.chest()
    return inventory("minecraft:chest", {
        [1] = { name = "minecraft:cobblestone", displayName = "Cobblestone", count = 64 },
        [5] = { name = "minecraft:torch", displayName = "Torch", count = 12 },
    })
end

function PERIPHERAL_KINDS.barrel()
    return inventory("minecraft:barrel", {})
end

function PERIPHERAL_KINDS.modem()
    local open = {}
    local function channel(n, c)
        checkType(n, c, "number")
        if c < 0 or c > 65535 then error("Channel out of range", 0) end
        return c
    end
    return { types = { "modem" }, methods = {
        isWireless = function() return true end,
        open = function(c) open[channel(1, c)] = true end,
        close = function(c) open[channel(1, c)] = nil end,
        isOpen = function(c) return open[channel(1, c)] == true end,
        closeAll = function() open = {} end,
        transmit = function(c, reply, message)
            channel(1, c)
            channel(2, reply)
            emit("modem " .. c .. " " .. reply .. " " .. hex(tostring(message)))
        end,
    } }
end

-- One way to attach: "NAME=KIND" from --peripheral (before the program
-- starts, no event, as for a peripheral already there at boot) or from the
-- host's attach line (with CC's "peripheral" event, queued by readHost);
-- detach takes "NAME" ("peripheral_detach").
function hostAttach(on, spec)
    if not on then
        attached[spec] = nil
        return spec
    end
    local name, kind = spec:match("^([^=]+)=(%w+)$")
    if not name or not PERIPHERAL_KINDS[kind] then error("cc-emu: bad peripheral " .. spec .. " (NAME=KIND)", 0) end
    attached[name] = PERIPHERAL_KINDS[kind]()
    return name
end
for _, spec in ipairs(cfg.peripherals) do hostAttach(true, spec) end

peripheral = {}
function peripheral.getNames()
    local out = {}
    for name in pairs(attached) do out[#out + 1] = name end
    table.sort(out)
    return out
end
function peripheral.isPresent(name) return attached[checkType(1, name, "string")] ~= nil end
function peripheral.getType(p)
    local a = type(p) == "table" and p.__peripheral or attached[checkType(1, p, "string", "table")]
    if not a then return nil end
    return table.unpack(a.types)
end
function peripheral.hasType(name, t)
    local a = attached[checkType(1, name, "string")]
    if not a then return nil end
    for _, x in ipairs(a.types) do if x == t then return true end end
    return false
end
function peripheral.getMethods(name)
    local a = attached[checkType(1, name, "string")]
    if not a then return nil end
    local out = {}
    for m in pairs(a.methods) do out[#out + 1] = m end
    table.sort(out)
    return out
end
function peripheral.call(name, method, ...)
    checkType(1, name, "string")
    checkType(2, method, "string")
    local a = attached[name]
    if not a then error("No peripheral attached", 2) end
    local fn = a.methods[method]
    if not fn then error("No such method " .. method, 2) end
    return fn(...)
end
-- As CC's rom/apis/peripheral.lua: each method goes through peripheral.call,
-- so a wrapped peripheral that was detached since raises.
function peripheral.wrap(name)
    local a = attached[checkType(1, name, "string")]
    if not a then return nil end
    local w = {}
    for m in pairs(a.methods) do w[m] = function(...) return peripheral.call(name, m, ...) end end
    return w
end
function peripheral.find(t)
    local out = {}
    for _, name in ipairs(peripheral.getNames()) do
        if peripheral.hasType(name, t) then out[#out + 1] = peripheral.wrap(name) end
    end
    return table.unpack(out)
end

---------------------------------------------------------------------------
-- multishell (--multishell): an advanced computer's shell runs in CC's
-- rom/programs/advanced/multishell.lua. Each tab is a process with its own
-- window on the screen; its programs see only the plain terminal methods of
-- that window (multishell copies the keys of term.native(): no getLine).
-- Keyboard events and terminate go to the focused tab, the rest to every
-- tab (with its filter); a second tab shows the tab bar, so the windows
-- move down one row. Here tab 1 runs the command where CC runs the shell,
-- and the computer's run ends when the last tab ends.
---------------------------------------------------------------------------

local function runMultishell(command, args)
    local parentTerm = term.current()
    local w, h = parentTerm.getSize()
    local procs, current, runningProc, menu = {}, nil, nil, false
    local USER = { char = true, key = true, key_up = true, paste = true, terminate = true, file_transfer = true,
        mouse_click = true, mouse_drag = true, mouse_up = true, mouse_scroll = true }

    local function select(n)
        if current == n then return end
        if current and procs[current] then procs[current].window.setVisible(false) end
        current = n
        if n then
            procs[n].window.setVisible(true)
            procs[n].interacted = true
        end
    end

    local function resumeProc(n, ev, ...)
        local p = procs[n]
        if not p or not (p.filter == nil or p.filter == ev or ev == "terminate") then return end
        local previous, saved = runningProc, running
        runningProc, running = n, p.running
        term.redirect(p.terminal)
        local ok, res = coroutine.resume(p.co, ev, ...)
        p.terminal = term.current()
        p.running, running, runningProc = running, saved, previous
        if ok then p.filter = res else printError(res) end
    end

    local function cull(n)
        local p = procs[n]
        if p and coroutine.status(p.co) == "dead" then
            if current == n then select(nil) end
            table.remove(procs, n)
            if current == nil then
                if n > 1 then select(n - 1) elseif #procs > 0 then select(1) end
            end
            return true
        end
        return false
    end

    local function launch(focus, title, fn)
        local n = #procs + 1
        if n == 2 and not menu then
            menu = true
            for _, p in ipairs(procs) do p.window.reposition(1, 2, w, h - 1) end
        end
        local p = { title = title, running = {}, interacted = false }
        p.window = menu and window.create(parentTerm, 1, 2, w, h - 1, false) or window.create(parentTerm, 1, 1, w, h, false)
        p.terminal = {}
        for k in pairs(native) do p.terminal[k] = p.window[k] end
        p.co = coroutine.create(function()
            fn()
            if not p.interacted then
                term.setCursorBlink(false)
                print("Press any key to continue")
                os.pullEvent("char")
            end
        end)
        procs[n] = p
        if focus then select(n) end
        resumeProc(n)
        return n
    end

    multishell = {}
    function multishell.getFocus() return current end
    function multishell.setFocus(n)
        checkType(1, n, "number")
        if procs[n] then select(n) return true end
        return false
    end
    function multishell.getTitle(n)
        checkType(1, n, "number")
        return procs[n] and procs[n].title or nil
    end
    function multishell.setTitle(n, title)
        checkType(1, n, "number")
        checkType(2, title, "string")
        if procs[n] then procs[n].title = title end
    end
    function multishell.getCurrent() return runningProc end
    function multishell.getCount() return #procs end
    function multishell.launch(env, path, ...)
        checkType(1, env, "table")
        checkType(2, path, "string")
        local a = table.pack(...)
        local previous = term.current()
        local n = launch(false, fs.getName(path), function() shell.execute(path, table.unpack(a, 1, a.n)) end)
        term.redirect(previous)
        return n
    end
    -- rom/programs/shell.lua defines openTab when multishell exists: a new
    -- shell running the words given.
    function shell.openTab(...)
        local words = table.pack(...)
        local previous = term.current()
        local line = table.concat(words, " ")
        local n = launch(false, fs.getName(shellWords(line)[1] or ""), function() shell.run(line) end)
        term.redirect(previous)
        return n
    end
    function shell.switchTab(n)
        checkType(1, n, "number")
        multishell.setFocus(n)
    end

    launch(true, fs.getName(command), function() shell.execute(command, table.unpack(args)) end)
    while #procs > 0 do
        local ev = table.pack(os.pullEventRaw())
        if USER[ev[1]] then
            local n = current
            if n then
                resumeProc(n, table.unpack(ev, 1, ev.n))
                cull(n)
            end
        else
            for n = 1, #procs do resumeProc(n, table.unpack(ev, 1, ev.n)) end
            for n = #procs, 1, -1 do cull(n) end
        end
    end
    term.redirect(parentTerm)
    return true
end

_HOST = "ComputerCraft 1.109.0 (cc-emu)"
-- What CC does not offer (require and package are per program, see shell.execute).
require, package, module, collectgarbage = nil, nil, nil, nil

-- What CC's bios.lua adds to the globals: the Lua 5.1 names unpack and
-- loadstring, a stub of the old bit library over bit32, and loadfile/dofile
-- reading through fs. Cobalt has utf8 (Lua 5.3's) and bit32 built in;
-- stock Lua 5.2 has bit32, utf8 is provided here.
unpack = table.unpack
function loadstring(str, chunkname) return load(str, chunkname) end
function loadfile(filename, mode, env)
    if type(mode) == "table" and env == nil then mode, env = "t", mode end
    local h = fs.open(filename, "r")
    if not h then return nil, "File not found" end
    local fn, err = load(h.readAll(), "@/" .. fs.combine(filename, ""), mode or "t", env or _G)
    h.close()
    return fn, err
end
function dofile(filename)
    local fn, err = loadfile(filename, nil, _G)
    if not fn then error(err, 2) end
    return fn()
end
bit = {
    bnot = bit32.bnot, band = bit32.band, bor = bit32.bor, bxor = bit32.bxor,
    brshift = bit32.arshift, blshift = bit32.lshift, blogic_rshift = bit32.rshift,
}
utf8 = {
    charpattern = "[\0-\x7F\xC2-\xF4][\x80-\xBF]*",
    char = function(...)
        local out = {}
        for i = 1, select("#", ...) do out[i] = utf8Char(select(i, ...)) end
        return table.concat(out)
    end,
    len = function(s)
        local ok, cps = pcall(utf8Codes, s)
        if not ok then return nil, 1 end
        return #cps
    end,
    codepoint = function(s, i, j)
        i = i or 1
        j = j or i
        local out, pos = {}, i
        while pos <= j do
            local len = 1
            local b = s:byte(pos)
            if b >= 0xF0 then len = 4 elseif b >= 0xE0 then len = 3 elseif b >= 0xC0 then len = 2 end
            out[#out + 1] = utf8Codes(s:sub(pos, pos + len - 1))[1]
            pos = pos + len
        end
        return table.unpack(out)
    end,
    codes = function(s)
        local cps, pos, n = utf8Codes(s), 1, 0
        return function()
            n = n + 1
            local cp = cps[n]
            if cp == nil then return nil end
            local at = pos
            pos = pos + #utf8Char(cp)
            return at, cp
        end
    end,
}

settings.load("/.settings")

local program = coroutine.create(function()
    if cfg.multishell then return runMultishell(command, commandArgs) end
    return shell.execute(command, table.unpack(commandArgs))
end)
real.sethook(program, tlwyHook, "", 1000)

local filter
local function resume(...)
    resumeStart, abortThrown, inProgram = real.clock(), false, true
    local ok, res = coroutine.resume(program, ...)
    inProgram = false
    if not ok then
        printError(tostring(res))
        exit(2)
    end
    if coroutine.status(program) == "dead" then exit(res and 0 or 1) end
    filter = res
end

resume()
while true do
    local ev = pop()
    if filter == nil or ev[1] == filter or ev[1] == "terminate" then
        resume(table.unpack(ev, 1, ev.n))
    end
end
