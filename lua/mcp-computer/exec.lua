-- mcp-computer part exec.lua: output capture, sending on the link, identity, and running exec-lua chunks and their answers.
-- scripts/build-lua.js joins the parts into the one program the bridge serves (see core.lua).

-- From the parts before this one (see M in core.lua).
local NULL, array, cutToEncoded, describe, encode, encodeString = M.NULL, M.array, M.cutToEncoded, M.describe, M.encode, M.encodeString
local fitReturns = M.fitReturns

---------------------------------------------------------------------------
-- Output capture: a terminal that records what would have been shown
---------------------------------------------------------------------------

-- Text is rebuilt line by line: the row under the cursor is kept as a
-- string, and it is finished with "\n" whenever the cursor moves to
-- another row (print, scroll, setCursorPos), so the result reads like the
-- screen would. At most `limit` bytes are kept. Text written at the end of
-- the row (the usual case) is kept in pieces, joined only when something is
-- written over it: a program calling term.write for every character of a
-- long row costs what it does on the screen, not a copy of the row each time.
-- A row keeps at most rowMax bytes (a detached job's capture has no overall
-- limit, its finished lines being handed over as they come).
local function newCapture(limit, rowMax)
    rowMax = rowMax or limit
    local base = term.current()
    local w, h = base.getSize()
    local colour = base.isColour()
    local parts, bytes, row = {}, 0, ""
    local tail, tailLen = {}, 0 -- pieces written at the end of row, not yet joined to it
    local function joinRow()
        if tailLen > 0 then
            row = row .. table.concat(tail)
            tail, tailLen = {}, 0
        end
        return row
    end
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
        add(joinRow() .. string.rep("\n", count or 1))
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
        if col + #text - 1 > rowMax then
            cap.truncated = true
            text = text:sub(1, math.max(0, rowMax - col + 1))
        end
        x = x + width
        -- Nothing left to keep: no padding either (it would grow past the limits).
        if text == "" then return end
        local len = #row + tailLen
        if col > len then
            -- At or past the end: only appended (a gap of at most 256 spaces first).
            if col > len + 1 then text = string.rep(" ", math.min(col - len - 1, 256)) .. text end
            tail[#tail + 1] = text
            tailLen = tailLen + #text
        else
            joinRow()
            row = row:sub(1, col - 1) .. text .. row:sub(col + #text)
        end
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
        if joinRow() ~= "" then breakLine() end
    end
    function t.clearLine()
        row, tail, tailLen = "", {}, 0
    end
    function t.getCursorPos() return x, y end
    function t.setCursorPos(nx, ny)
        nx, ny = math.floor(nx), math.floor(ny)
        if ny > y then
            breakLine(math.min(ny - y, h))
        elseif ny < y and joinRow() ~= "" then
            breakLine()
        end
        x, y = nx, ny
    end
    function t.scroll(n)
        if n > 0 then
            breakLine(math.min(n, h))
        elseif n < 0 and joinRow() ~= "" then
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
        return table.concat(parts) .. joinRow()
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

-- Timers mcp-computer starts for itself (the identity check, the hello and
-- reconnect waits). CC sends every timer event to every coroutine, so
-- without this a chunk's bare os.pullEvent() got a timer it never started.
local function startOwnTimer(link, seconds)
    local id = os.startTimer(seconds)
    link.ownTimers[id] = true
    return id
end

local function cancelOwnTimer(link, id)
    os.cancelTimer(id)
    link.ownTimers[id] = nil
end

-- The program's own events: its websocket's and its own timers'. Chunks
-- never see them. A fired timer is forgotten here (CC never reuses an id).
-- CC names a websocket's events by the address dialled, so the link dials
-- one of its own (link.wsUrl): a chunk's websocket to the bridge's address
-- is the chunk's.
local function isOwnEvent(link, ev)
    local name = ev[1]
    if name == "timer" then
        if not link.ownTimers[ev[2]] then return false end
        link.ownTimers[ev[2]] = nil
        return true
    end
    return ev[2] == link.wsUrl and (name == "websocket_message" or name == "websocket_closed"
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

-- An error text for a frame: at most half its budget (with a small
-- --max-frame or CC_MAX_FRAME_BYTES, less than the 2 KiB cutError keeps).
local function fitError(link, err)
    local room = math.floor(frameBudget(link.maxFrame) / 2)
    if type(err) == "string" and #err > room then return cutToEncoded(err, room - 3) .. "..." end
    return err
end

local function respond(link, id, ok, result, err)
    local frame = { type = "response", id = id, ok = ok }
    if ok then frame.result = result else frame.error = fitError(link, err) end
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

-- The most bytes a hello or info frame may take: the link's frame limit, or
-- the bridge's identity budget (hello-ok maxIdentity, its
-- CC_MAX_IDENTITY_BYTES) when smaller. Before the first hello-ok, and with a
-- bridge that does not say, the frame limit alone.
function identity.limit(link)
    return math.min(link.maxFrame, link.bridgeMaxIdentity or link.maxFrame)
end

-- Fits a hello or info frame into the link's frame budget: peripherals are
-- left out from the end (the job list is budgeted by identity.jobsList,
-- which left out `jobsOmitted`). When anything is left out the frame says
-- how much, "omitted": {peripherals, jobs}, for the bridge to show.
function identity.fit(frame, maxFrame, jobsOmitted)
    local list = frame.peripherals
    local omitted = { peripherals = #list, jobs = jobsOmitted or 0 }
    -- measured with every peripheral out and the marker at its largest
    frame.peripherals, frame.omitted = array({}), omitted
    local used, keep = #encode(frame), {}
    for i = 1, #list do
        local size = #encode(list[i]) + 1
        if used + size > frameBudget(maxFrame) then break end
        keep[i], used = list[i], used + size
    end
    frame.peripherals, omitted.peripherals = array(keep), #list - #keep
    if omitted.peripherals == 0 and omitted.jobs == 0 then frame.omitted = nil end
    return frame
end

-- Sends an info frame when the label, peripherals or jobs (identity.jobsList,
-- set by tools.lua) changed since the last one (or the hello); called for
-- every event while linked.
function identity.watch(link, ev)
    local now = os.clock()
    local name = ev[1]
    local due = name == "peripheral" or name == "peripheral_detach" or (name == "timer" and ev[2] == link.identityTimer)
    if (name == "timer" and ev[2] == link.identityTimer) or now - link.identityTimerAt > 2 * identity.CHECK_EVERY then
        -- (a timer long overdue was dropped by CC, its queue full: a new one keeps the checks going)
        if name ~= "timer" or ev[2] ~= link.identityTimer then cancelOwnTimer(link, link.identityTimer) end
        link.identityTimer, link.identityTimerAt = startOwnTimer(link, identity.CHECK_EVERY), now
    end
    if not due and now - (link.identityChecked or 0) < 1 then return end
    link.identityChecked = now
    identity.send(link, (due and name ~= "timer") and identity.peripherals() or link.peripheralList)
end

-- Sends an info frame with the label, `list` (the peripherals) and the jobs
-- when any of them changed since the last frame (or the hello).
function identity.send(link, list)
    local label = labelOf()
    local peripherals = list == link.peripheralList and link.sentPeripherals or encode(list)
    local jobList, jobsOmitted = identity.jobsList(link)
    local jobs = encode(jobList)
    if label == link.sentLabel and peripherals == link.sentPeripherals and jobs == link.sentJobs then return end
    link.sentLabel, link.sentPeripherals, link.sentJobs, link.peripheralList = label, peripherals, jobs, list
    sendJson(link, encode(identity.fit({ type = "info", computerLabel = label == nil and NULL or label, peripherals = list,
        jobs = jobList }, identity.limit(link), jobsOmitted)))
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
    if not ok then f.error = fitError(link, err) end
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

-- CC's watchdog error carries the position of the code it stopped
-- ("exec-lua:1: Too long without yielding": a level-1 LuaError in Cobalt).
local function isWatchdog(err)
    return err == TLWY or (type(err) == "string" and err:match(":%d+: " .. TLWY .. "$") ~= nil)
end

-- The text of an error value; and true when CC's watchdog stopped its
-- __tostring (the caller must then yield before anything more runs).
local function describeError(err)
    if err == nil then return "error (no message)" end
    if type(err) ~= "string" then
        -- (a __tostring may fail, or give back what is not text: Lua 5.2's tostring passes it on)
        local ok, s = pcall(tostring, err)
        if not ok and isWatchdog(s) then
            return ("error object of type %s (its __tostring ran until CC's limit of about 7 s for one event"
                .. " ran out, so CC stopped it)"):format(type(err)), true
        end
        err = (ok and (type(s) == "string" or type(s) == "number")) and tostring(s) or ("error object of type " .. type(err))
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

-- The program's own events that it queues for itself (PACE_EVENT, CONTINUE):
-- CC drops an event queued while its queue holds 256 (ComputerExecutor's
-- QUEUE_LIMIT), silently, so a chunk that fills the queue could make one get
-- lost, and with it an answer (never sent) or an event for the chunks (never
-- handed on). Each is queued with a number and noted with how many events the
-- program had pulled then (link.pulled, counted by nextEvent): at most 255 are
-- ahead of it, so one not back within 256 pulls was dropped and is queued again.
local QUEUE_LIMIT = 256

local function queueOwn(link, name)
    link.ownSeq = link.ownSeq + 1
    link.ownQueued[link.ownSeq] = { name = name, at = link.pulled }
    os.queueEvent(name, link.ownSeq)
end

-- Called by nextEvent for every event: `seq` is set when the event is one of these.
local function ownEventBack(link, seq)
    if seq ~= nil then link.ownQueued[seq] = nil end
    if next(link.ownQueued) == nil then return end
    local lost = {}
    for n, q in pairs(link.ownQueued) do
        if link.pulled - q.at >= QUEUE_LIMIT then lost[#lost + 1] = n end
    end
    table.sort(lost)
    for _, n in ipairs(lost) do
        local name = link.ownQueued[n].name
        link.ownQueued[n] = nil
        queueOwn(link, name)
    end
end

-- (defined below with the chunks' resumes)
local enterChunk, leaveChunk

-- A chunk's own code also runs after its last resume: the __tostring of an
-- error object or of a returned key. It runs here as the chunk did, as if
-- for a chunk already finished (its terminate goes nowhere, as the chunk's
-- own would once it ended, never to the link's loop as a Ctrl+T).
local FINISHED = { done = true }

local function asFinishedChunk(link, fn, ...)
    local saved = enterChunk(link)
    local outer = link.inChunk
    link.inChunk = FINISHED
    local res = table.pack(pcall(fn, ...))
    link.inChunk = outer
    leaveChunk(saved)
    return table.unpack(res, 1, res.n)
end

-- Runs (or goes on with) building and sending one answer; see pace().
-- Whatever goes wrong in it, the bridge still gets an answer for the id.
local function runAnswer(link, job)
    pacer = { n = 0, start = job.start }
    local okCall, ok, res = asFinishedChunk(link, coroutine.resume, job.co)
    if not okCall then ok, res = false, ok end
    pacer = nil
    if not ok then
        if isWatchdog(res) then link.tripped = true end
        sendJson(link, encode({ type = "response", id = job.id, ok = false,
            error = fitError(link, "could not build the answer: " .. describeError(res)),
            result = { output = "", returns = array({}), truncated = true } }))
    elseif coroutine.status(job.co) ~= "dead" then
        link.answers[#link.answers + 1] = job
        queueOwn(link, PACE_EVENT)
    end
end

-- A finished or cancelled chunk leaves the run list at once, with all it
-- holds (its captured output): nothing else may come to prune the list for a
-- long time, since the link's own events never reach chunks. A new list, so a
-- deliverToChunks loop over the old one goes on undisturbed.
local function forgetChunk(link, chunk)
    local keep = {}
    for _, c in ipairs(link.order) do
        if c ~= chunk then keep[#keep + 1] = c end
    end
    link.order = keep
end

local function finishChunk(link, chunk, ok, err, values)
    chunk.done = true
    if link.chunks[chunk.id] == chunk then link.chunks[chunk.id] = nil end
    forgetChunk(link, chunk)
    if chunk.onFinish then return chunk.onFinish(link, chunk, ok, err, values) end -- detached job
    -- A label the chunk set (os.setComputerLabel, `label set`) goes to the bridge before the answer,
    -- so what the caller does next (list-computers) sees it, not up to a check's 2 s later.
    if labelOf() ~= link.sentLabel then identity.send(link, link.peripheralList) end
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
    runAnswer(link, { co = co, id = id, start = link.resumeStart or wallClock() })
end

local function failExec(link, id, err)
    local frame = { type = "response", id = id, ok = false, error = fitError(link, err),
        result = { output = "", returns = array({}), truncated = false } }
    sendJson(link, encode(frame))
end

-- Resumes a chunk with its output captured; the terminal is restored
-- afterwards whatever happens.
local function noInput()
    error("read() has no input here: what the bridge runs (exec-lua, run-program, a job) gets no keyboard", 2)
end

-- While a chunk runs: no paging (pagedPrint and pagedTabulate would wait for
-- a key at the bottom of the capture, which no one can press) and read()
-- fails at once instead of waiting forever. CC runs nothing else while we
-- do, so the globals are swapped for the resume and put back after it.
-- A "terminate" a chunk queues (os.queueEvent("terminate")) is its own: CC
-- gives the event no sender, so as a real one it would reach the link's
-- loop, which takes terminate for the player's Ctrl+T (foreground mode:
-- mcp-computer stopped) or leaves it to the player's shell (background). It
-- is queued as CHUNK_TERMINATE with a number instead, and nextEvent hands a
-- "terminate" to that chunk alone, whatever it waits for (as CC does).
local CHUNK_TERMINATE = "mcp_computer_chunk_terminate"

local function queueChunkTerminate(link, chunk)
    link.terminateSeq = (link.terminateSeq or 0) + 1
    link.terminates = link.terminates or setmetatable({}, { __mode = "v" })
    link.terminates[link.terminateSeq] = chunk
    os.queueEvent(CHUNK_TERMINATE, link.terminateSeq)
end

function enterChunk(link)
    local tu = textutils
    local saved = { read = _G.read, pagedPrint = tu.pagedPrint, pagedTabulate = tu.pagedTabulate, queueEvent = os.queueEvent }
    _G.read = noInput
    local queue = saved.queueEvent
    os.queueEvent = function(name, ...)
        -- (this function may be kept past the resume: it acts for the chunk running when it is
        -- called, and outside every chunk it is the real one)
        local running = link.inChunk
        if running == nil then return queue(name, ...) end
        -- Nothing is taken off CC's queue while the program runs for one event
        -- (link.chunkQueued counts from nextEvent's pull): past QUEUE_LIMIT
        -- events CC drops every one, silently, the link's frames with them (a
        -- chunk queueing more than it pulls in a loop never got its cancel).
        link.chunkQueued = (link.chunkQueued or 0) + 1
        if link.chunkQueued > QUEUE_LIMIT then
            error(("os.queueEvent: more than %d events queued without a yield; CC's event queue holds %d and"
                .. " silently drops the rest, the link's own messages with them"):format(QUEUE_LIMIT, QUEUE_LIMIT), 2)
        end
        if name == "terminate" then return queueChunkTerminate(link, running) end
        return queue(name, ...)
    end
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

function leaveChunk(saved)
    _G.read = saved.read
    os.queueEvent = saved.queueEvent
    textutils.pagedPrint, textutils.pagedTabulate = saved.pagedPrint, saved.pagedTabulate
    if saved.stdin then saved.stdin.readLine = saved.readLine end
end

local function stepChunk(link, chunk, ...)
    local saved = enterChunk(link)
    local outer = link.inChunk
    link.inChunk = chunk
    local previous = term.redirect(chunk.target)
    local args = table.pack(...)
    local started = os.clock()
    local ok, res = pcall(function()
        return table.pack(coroutine.resume(chunk.co, table.unpack(args, 1, args.n)))
    end)
    chunk.target = term.current()
    term.redirect(previous)
    link.inChunk = outer
    leaveChunk(saved)
    if not ok then res = { false, res, n = 2 } end

    if not res[1] and isWatchdog(res[2]) then
        -- CC throws this once per resume; 1.5 s later it shuts the computer
        -- down. Nothing more may run before the next yield.
        link.tripped = true
        local now = os.clock()
        finishChunk(link, chunk, false, describeWatchdog(now - started, now - (link.eventStart or started)), { n = 0 })
    elseif not res[1] then
        local _, text, tripped = asFinishedChunk(link, describeError, res[2])
        if tripped then link.tripped = true end
        finishChunk(link, chunk, false, text, { n = 0 })
    elseif coroutine.status(chunk.co) == "dead" then
        finishChunk(link, chunk, true, nil, table.pack(table.unpack(res, 2, res.n)))
    else
        chunk.filter = res[2]
    end
    if chunk.afterStep and not chunk.done then chunk.afterStep(chunk) end
end

-- For the parts after this one.
M.cutError, M.failExec, M.frameBudget, M.newCapture, M.respond, M.stepChunk = cutError, failExec, frameBudget, newCapture, respond, stepChunk
M.describeError, M.pongText, M.identity, M.isOwnEvent, M.labelOf, M.runAnswer = describeError, pongText, identity, isOwnEvent, labelOf, runAnswer
M.startOwnTimer, M.cancelOwnTimer, M.forgetChunk = startOwnTimer, cancelOwnTimer, forgetChunk
M.sendJson, M.queueOwn, M.ownEventBack = sendJson, queueOwn, ownEventBack
M.CHUNK_TERMINATE, M.asFinishedChunk = CHUNK_TERMINATE, asFinishedChunk
