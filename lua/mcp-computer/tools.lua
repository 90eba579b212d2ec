-- mcp-computer part tools.lua: safe tools part B: peripherals, programs, screen and keyboard, detached jobs.
-- scripts/build-lua.js joins the parts into the one program the bridge serves (see core.lua).

-- From the parts before this one (see M in core.lua).
local NULL, array, cutError, cutToEncoded, decodeChar, describe = M.NULL, M.array, M.cutError, M.cutToEncoded, M.decodeChar, M.describe
local failExec, fitReturns, frameBudget, newCapture, respond, stepChunk = M.failExec, M.fitReturns, M.frameBudget, M.newCapture, M.respond, M.stepChunk
local encode, forgetChunk, identity, queueOwn = M.encode, M.forgetChunk, M.identity, M.queueOwn

---------------------------------------------------------------------------
-- Safe tools, part B (lua-tools): peripherals, programs, screen and
-- keyboard, detached jobs. Fixed Lua; nothing here runs code the bridge
-- sends except a detached exec-lua, which obeys the same exec switch.
---------------------------------------------------------------------------

-- Everything here lives in one table (locals of this chunk are limited to 200).
local B = {}

B.JOB_OUTPUT_MAX = 65536 -- bytes of a job's output kept on the computer (the tail)
B.JOBS_MAX = 16 -- jobs kept (running and finished); the oldest finished go first
-- Events send-input may have in CC's event queue at once, one call's and the calls' before it
-- together, each call's mark (below) counted as one: CC holds 256 events per computer and drops
-- the rest silently, and requests (the bridge's CC_MAX_REQUESTS_PER_COMPUTER, 128: a waiting
-- request is one event, its message or its answer's pacing event) and the program's own events
-- (a few timers) share that queue, so 128 + 100 + those stay below 256.
B.INPUT_EVENTS_MAX = 100
B.INPUT_MARK = "mcp_computer_input" -- queued after each call's events; back here, they left the queue
B.INPUT_PROBE_AGAIN = 5 -- s (os.clock) after which a refused call queues another probe mark
B.inputBatches, B.inputSeq = {}, 0
B.PERIPHERAL_ARGS_MAX = 255 -- arguments of one call-peripheral (the bridge sends at most 64)

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

-- An answer listing `items` in order, each made an entry by `toEntry`, as far
-- as they fit in the link's frame; "omitted" says how many more were left out.
local function fittedList(link, field, items, toEntry)
    local out, used, room = {}, 0, frameBudget(link.maxFrame) - 256
    for _, item in ipairs(items) do
        local entry = toEntry(item)
        local size = #encode(entry) + 1
        if used + size > room then break end
        out[#out + 1], used = entry, used + size
    end
    local result = { [field] = array(out) }
    if #out < #items then result.omitted = #items - #out end
    return result
end

local function peripheralEntry(name)
    local methods = peripheral.getMethods(name) or {}
    table.sort(methods)
    return { name = name, types = B.peripheralTypes(name), methods = array(methods) }
end

-- Every peripheral, by name, as far as they fit in the link's frame.
function B.listPeripherals(link)
    if not peripheral then error("this computer has no peripheral API", 0) end
    local names = peripheral.getNames()
    table.sort(names)
    return fittedList(link, "peripherals", names, peripheralEntry)
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
    -- argCount counts the JSON nulls at the end of args too (nil here); a bad
    -- one would loop or unpack that many times before anything could answer.
    local count = params.argCount
    if count == nil then count = type(params.args) == "table" and #params.args or 0 end
    if type(count) ~= "number" or count ~= math.floor(count) or count < 0 or count > B.PERIPHERAL_ARGS_MAX then
        return failExec(link, id, ("call-peripheral: params.argCount must be a whole number from 0 to %d"):format(B.PERIPHERAL_ARGS_MAX))
    end
    local args, n = B.listArg(params.args, count)
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
    return B.startFixedChunk(link, id, B.shellRun, command)
end

-- The program a command line starts: its first word as CC's shell splits
-- it (a quoted first word is one word).
function B.programOf(command)
    return command:match('^[ \t]*"([^"]*)"') or command:match('^[ \t]*([^ \t"]+)')
end

-- shell.run of a command line, but a program that does not exist is an
-- error naming it (shell.run prints "No such program" and returns false,
-- just as a program that ran and failed does).
function B.shellRun(command)
    local name = B.programOf(command)
    if name and not shell.resolveProgram(name) then error("No such program: " .. shorten(name, 60), 0) end
    return shell.run(command)
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

-- A screen row holds one of CC's characters per byte (code points 0-255):
-- each byte from 128 up is written as that code point in UTF-8 here, or the
-- JSON encoder would read bytes that happen to form UTF-8 (a program printing
-- a UTF-8 string, which CC draws as two characters) as one character, and the
-- row would no longer line up with its colours and the cursor.
function B.latin1Char(c)
    local b = c:byte()
    return string.char(0xC0 + math.floor(b / 64), 0x80 + b % 64)
end

function B.screenChars(text)
    if not text:find("[\128-\255]") then return text end
    return (text:gsub("[\128-\255]", B.latin1Char))
end

function B.readScreen(link)
    local screen = background and background.screen
    if not screen then B.noShellToRead() end
    B.checkShellOpen()
    local w, h = screen.getSize()
    local lines, fgs, bgs = {}, {}, {}
    for i = 1, h do
        local text, tf, tb = screen.getLine(i)
        lines[i], fgs[i], bgs[i] = B.screenChars(text or ""), tf or "", tb or ""
    end
    local cx, cy = screen.getCursorPos()
    local result = {
        width = w, height = h, cursorX = cx, cursorY = cy,
        cursorBlink = screen.getCursorBlink and screen.getCursorBlink() or false,
        colour = screen.isColour and screen.isColour() or false,
        lines = array(lines), foreground = array(fgs), background = array(bgs),
    }
    -- Within the link's frame: without the colour rows when the whole does
    -- not fit (a small --max-frame or CC_MAX_FRAME_BYTES), else an error.
    local room = frameBudget(link.maxFrame) - 256
    if #encode(result) > room then
        result.foreground, result.background, result.coloursOmitted = array({}), array({}), true
        local size = #encode(result)
        if size > room then
            error(("the screen's text (%d bytes as JSON) does not fit this link's frame limit (%d bytes);"
                .. " run mcp-computer with a larger --max-frame, or raise the bridge's CC_MAX_FRAME_BYTES"):format(size, link.maxFrame), 0)
        end
    end
    return result
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

-- Text as one paste event, as CC makes it of a player's clipboard: in CC's
-- charset (one character per code point up to 255, as B.textEvents), what
-- CC does not paste (control characters, 127-160, the soft hyphen) as "?",
-- one line of at most B.PASTE_MAX characters. Before, the UTF-8 bytes went
-- as they came ("é" pasted as two characters).
B.PASTE_MAX = 512

function B.pasteText(text)
    if text:find("[\r\n]") then
        error("a paste is one line in CC (a player's paste stops at the first line break): send more lines as"
            .. " text without paste, where \"\\n\" presses enter", 0)
    end
    local out, i = {}, 1
    while i <= #text do
        local cp, len = text:byte(i), 1
        if cp >= 0x80 then cp, len = decodeChar(text, i) end
        if cp > 255 or cp < 32 or (cp >= 127 and cp <= 160) or cp == 173 then cp = 63 end
        out[#out + 1] = string.char(cp)
        i = i + len
        if #out > B.PASTE_MAX then
            error(("a paste is at most %d characters in CC: send longer text in parts"):format(B.PASTE_MAX), 0)
        end
    end
    return table.concat(out)
end

-- On an advanced computer multishell hands keyboard events (and terminate,
-- paste) to the focused tab only, when it takes them off CC's queue: CC has
-- no way to queue one for another tab. read-screen reads the shell tab that
-- ran --background; when another tab has the focus (the link's own, or one
-- the player opened) the events would go there, unseen: refused, saying
-- which tab has it.
-- multishell numbers tabs by position: when one closes, those after it shift
-- down, and a new tab goes at the end. The shell tab was before the link's at
-- launch, so the link's own number says how many tabs before it closed since
-- (d): none, and the shell tab is where it was; more than the tabs other
-- than the shell that were before the link, and the shell tab has closed;
-- else it is one of the d numbers at or below its old one, or has closed.
-- Multishell does not tell which (and CC runs each program, the launcher
-- too, in a coroutine of its own that ends with it, not the tab's): the
-- launcher notes when its shell's exit was called (tabs.exited), which ends
-- the tab unless that shell ran inside another in the same tab.
-- That is a guess; multishell's own list of tabs, when it can be read, is
-- not: the launcher keeps its tab's entry (B.tabEntry), and the shell tab is
-- where that entry is in the list, or has closed once it is not there or
-- its coroutine is dead, however it ended (exit, the program a tab was
-- opened for returning or failing, anything else).
function B.shellTab(tabs, own)
    if tabs.entry then
        local list = B.tabList()
        if list then
            for i = 1, #list do
                if list[i] == tabs.entry then
                    if coroutine.status(tabs.entry.co) == "dead" then return nil end
                    return i, i
                end
            end
            return nil
        end
    end
    local d = tabs.link - own
    if d == 0 then return tabs.shell, tabs.shell end
    if d > tabs.link - 2 or tabs.exited then return nil end
    return math.max(1, tabs.shell - d), tabs.shell
end

-- multishell's list of tabs: CC's rom/programs/advanced/multishell.lua keeps
-- it in a local (one entry per tab, in tab order, each with the tab's
-- coroutine as `co`) that multishell.getCount reads. Found by that shape
-- through debug.getupvalue; nil when it cannot be (no debug library,
-- another multishell), and the tab numbers are then guessed as above.
function B.tabList()
    local count = multishell and multishell.getCount
    if type(count) ~= "function" or type(debug) ~= "table" or type(debug.getupvalue) ~= "function" then return nil end
    local okN, n = pcall(count)
    if not okN or type(n) ~= "number" or n < 1 then return nil end
    for i = 1, 8 do
        local ok, name, value = pcall(debug.getupvalue, count, i)
        if not ok or name == nil then return nil end
        if type(value) == "table" and #value == n then
            local shaped = true
            for j = 1, n do
                local e = rawget(value, j)
                if type(e) ~= "table" or type(rawget(e, "co")) ~= "thread" then shaped = false break end
            end
            if shaped then return value end
        end
    end
    return nil
end

-- The entry of tab `n` in multishell's list, or nil (see B.tabList).
function B.tabEntry(n)
    local list = B.tabList()
    return list and type(n) == "number" and list[n] or nil
end

function B.shellTabClosed()
    error("the shell tab that read-screen reads (the one that ran mcp-computer --background) has closed: read-screen"
        .. " would show its last screen, and send-input's keys would go to whichever tab has the focus. Run"
        .. " mcp-computer --background again from a shell", 0)
end

-- read-screen: the shell tab is known to have closed (see B.shellTab)
function B.checkShellOpen()
    local tabs = background.tabs
    if not (tabs and tabs.link and tabs.shell and multishell and multishell.getCurrent) then return end
    if not B.shellTab(tabs, multishell.getCurrent()) then B.shellTabClosed() end
end

function B.checkFocus()
    local tabs = background.tabs
    if not (tabs and tabs.link and tabs.shell and multishell and multishell.getFocus and multishell.getCurrent) then return end
    local focus, own = multishell.getFocus(), multishell.getCurrent()
    local low, high = B.shellTab(tabs, own)
    if not low then B.shellTabClosed() end
    if focus ~= own and focus >= low and focus <= high then return end
    local title = multishell.getTitle and multishell.getTitle(focus)
    local which = ("tab %s%s"):format(tostring(focus), type(title) == "string" and (' "' .. shorten(title, 20) .. '"') or "")
    if focus == own then which = which .. ", mcp-computer's own" end
    error(("the focused tab is %s, not the shell tab (tab %s) that read-screen reads: CC gives keyboard events to the"
        .. " focused tab only. Switch to the shell tab (click it in the tab bar), then send again"):format(
        which, low == high and tostring(low) or (low .. " to " .. high)), 0)
end

function B.sendInput(_, params)
    if not (background and background.screen) then B.noShellToRead() end
    B.checkFocus()
    local events = {}
    local text = params.text
    if text ~= nil and type(text) ~= "string" then error("params.text must be a string", 0) end
    if text and text ~= "" then
        if params.paste == true then events[1] = { "paste", B.pasteText(text) } else B.textEvents(text, events) end
    end
    local list, n = B.listArg(params.keys)
    for i = 1, n do
        local problem = B.keyEvents(list[i], events)
        if problem then error(problem, 0) end
    end
    if #events == 0 then return { queued = 0 } end
    -- the call's events and its mark
    local cost = #events + 1
    if cost > B.INPUT_EVENTS_MAX then
        error(("that is %d events; at most %d fit CC's event queue at once"
            .. " (send long text with paste, or in parts)"):format(#events, B.INPUT_EVENTS_MAX - 1), 0)
    end
    local waiting = B.inputWaiting()
    if waiting + cost > B.INPUT_EVENTS_MAX then
        B.probeMarks()
        error(("CC's event queue still holds %d events of earlier send-input calls; with these %d it would be"
            .. " over %d: try again shortly"):format(waiting, cost, B.INPUT_EVENTS_MAX), 0)
    end
    for _, ev in ipairs(events) do os.queueEvent(table.unpack(ev, 1, 3)) end
    B.queueMark(cost)
    return { queued = #events }
end

-- Queues a mark counting `n` events (the call's and the mark itself).
function B.queueMark(n, probe)
    B.inputSeq = B.inputSeq + 1
    B.inputBatches[B.inputSeq] = { n = n, probe = probe, at = os.clock() }
    os.queueEvent(B.INPUT_MARK, B.inputSeq)
end

-- A mark is back (nextEvent): CC's queue is first in, first out, so every
-- earlier mark has come back too, or was dropped (its queue full): either
-- way the events before it have left the queue. No clock decides that a
-- mark was lost: a computer that CC runs slowly (many busy computers) can
-- hold one for longer than any limit, and its events still wait.
function B.markBack(seq)
    for s in pairs(B.inputBatches) do
        if s <= seq then B.inputBatches[s] = nil end
    end
end

-- A refused call queues one probe mark (counted as one event): when it comes
-- back, it settles the marks before it that CC dropped. Another is queued
-- only once the last one is B.INPUT_PROBE_AGAIN s old (it may have been
-- dropped itself); an extra probe costs one event, never lost input.
function B.probeMarks()
    local last = B.inputBatches[B.inputSeq]
    if last and last.probe and os.clock() - last.at < B.INPUT_PROBE_AGAIN then return end
    B.queueMark(1, true)
end

-- Input events of earlier calls not yet taken off CC's queue (their mark has not come back).
function B.inputWaiting()
    local n = 0
    for _, batch in pairs(B.inputBatches) do n = n + batch.n end
    return n
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
    -- Described now, within a quarter of a frame, the way exec-lua's answer is,
    -- as the finished chunk's code (a returned key's __tostring is the chunk's).
    local okD, returns = M.asFinishedChunk(link, B.describeJobReturns, link, values)
    if okD then
        job.returns = returns
    else
        if type(returns) == "string" and returns:find(TLWY, 1, true) then link.tripped = true end
        job.returns, job.ok = array({}), false
        if job.state == "done" then job.state = "failed" end
        job.error = "could not describe the returned values: " .. M.describeError(returns)
    end
    job.chunk = nil
end

function B.describeJobReturns(link, values)
    local budget = math.floor(frameBudget(link.maxFrame) / 4)
    local descs, room = {}, budget
    for i = 1, math.min(values.n, math.floor(budget / 15)) do
        local d, size = describe(values[i], nil, math.max(room, 16))
        descs[i], room = d, room - size
    end
    return fitReturns(values, descs, budget)
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
    local capture = newCapture(math.huge, B.JOB_OUTPUT_MAX)
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
    -- A program the shell cannot find is refused now, named, as on the call that waits (B.shellRun):
    -- no job for it, so the start does not answer as if it ran.
    local name = B.programOf(command)
    if name and not shell.resolveProgram(name) then
        return failExec(link, id, "No such program: " .. shorten(name, 60))
    end
    B.startJob(link, id, "run-program", shorten(command, 60), B.shellRun, command)
end

function B.jobSummary(job)
    return { job = job.id, kind = job.kind, what = job.what, state = job.state, outputBytes = job.total }
end

function B.jobStatus(link, params)
    local jid = params.job
    if jid == nil then
        -- Oldest first, as far as they fit in the link's frame; the answer says how many more were
        -- left out ("omitted"), as list-peripherals does.
        local list = {}
        for _, job in pairs(link.jobs) do list[#list + 1] = job end
        table.sort(list, function(a, b) return a.seq < b.seq end)
        return fittedList(link, "jobs", list, B.jobSummary)
    end
    if type(jid) ~= "string" then error("params.job must be a string (a job id)", 0) end
    local job = link.jobs[jid]
    if not job then
        error("no job " .. shorten(jid, 60)
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
    local budget = frameBudget(link.maxFrame)
    local s = B.jobSummary(job)
    s.cursor, s.skipped, s.more = cursor, skipped, true
    if job.chunk then
        -- the line in progress: its start, within a quarter of the frame
        s.partial = cutToEncoded(job.chunk.capture.text(), math.floor(budget / 4))
    elseif job.state ~= "running" then
        s.ok, s.returns = job.ok, array(job.returns or {})
        -- the error within an eighth of the frame (the 2 KiB it may have is more than a small one holds)
        if job.error then
            local room = math.max(16, math.floor(budget / 8))
            s.error = #job.error > room and cutToEncoded(job.error, room - 3) .. "..." or job.error
        end
    end
    -- the output: up to half the frame, as far as the rest of the answer (and its id) leaves room
    local rest = #encode(s) + #tostring(jid) + 96
    local text = cutToEncoded(job.out:sub(cursor - job.base + 1), math.max(0, math.min(math.floor(budget / 2), budget - rest)))
    s.output, s.cursor = text, cursor + #text
    s.more = cursor + #text < job.total
    return s
end

function B.jobCancel(link, params)
    local jid = type(params) == "table" and params.job
    if type(jid) ~= "string" then error("params.job must be a string (a job id)", 0) end
    local job = link.jobs[jid]
    if not job then
        error("no job " .. shorten(jid, 60) .. " on this computer", 0)
    end
    if job.state == "running" then
        local chunk = job.chunk
        if chunk then
            chunk.done = true
            forgetChunk(link, chunk)
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

-- The computer's jobs for its hello and info frames, so a relinked computer
-- (bridge restart, link drop) tells the bridge about the jobs it still has:
-- [{job, kind, state, what}], running ones first (oldest first), then the
-- finished ones, newest first; at most B.JOBS_MAX and within an eighth of a
-- frame (all 16 fit at CC's 128 KiB; a small --max-frame leaves the last
-- ones out: job-status lists them all), and how many were left out. A job id
-- longer than the bridge's 128 is left out (the bridge never makes one).
B.JOB_ID_MAX = 128
function B.jobsList(link)
    local list = {}
    for _, job in pairs(link.jobs) do
        if #job.id <= B.JOB_ID_MAX then list[#list + 1] = job end
    end
    table.sort(list, function(a, b)
        local ra, rb = a.state == "running", b.state == "running"
        if ra ~= rb then return ra end
        if ra then return a.seq < b.seq end
        return a.seq > b.seq
    end)
    local budget, used, out = math.floor(frameBudget(identity.limit(link)) / 8), 2, {}
    for _, job in ipairs(list) do
        local entry = { job = job.id, kind = job.kind, state = job.state, what = job.what }
        local size = #encode(entry) + 1
        if used + size > budget then break end
        out[#out + 1], used = entry, used + size
    end
    return array(out), #list - #out
end
identity.jobsList = B.jobsList

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
            queueOwn(link, CONTINUE)
            break
        end
        if not chunk.done and (chunk.filter == nil or chunk.filter == ev[1] or ev[1] == "terminate") then
            stepChunk(link, chunk, table.unpack(ev, 1, ev.n))
        end
    end
    local alive = {}
    for _, chunk in ipairs(link.order) do
        if not chunk.done then alive[#alive + 1] = chunk end
    end
    link.order = alive
end

-- For the parts after this one.
M.B, M.CONTINUE, M.deliverToChunks, M.startExec = B, CONTINUE, deliverToChunks, startExec
