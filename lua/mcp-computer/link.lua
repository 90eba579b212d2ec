-- mcp-computer part link.lua: the method table, frames from the bridge, the event loop, connecting, hello and serving.
-- scripts/build-lua.js joins the parts into the one program the bridge serves (see core.lua).

-- From the parts before this one (see M in core.lua).
local B, CONTINUE, array, deliverToChunks, encode, failExec = M.B, M.CONTINUE, M.array, M.deliverToChunks, M.encode, M.failExec
local files, identity, isOwnEvent, labelOf, respond, runAnswer = M.files, M.identity, M.isOwnEvent, M.labelOf, M.respond, M.runAnswer
local startOwnTimer, cancelOwnTimer, forgetChunk = M.startOwnTimer, M.cancelOwnTimer, M.forgetChunk
local safe, sendJson, startExec, ownEventBack = M.safe, M.sendJson, M.startExec, M.ownEventBack
local CHUNK_TERMINATE = M.CHUNK_TERMINATE

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

-- CC's JSON decoder gives every empty array as textutils.empty_json_array:
-- one table shared by every program, which errors when written to (and which
-- table.insert on a plain Lua fills for all of them). Params reach chunks as
-- `...`, so each empty array becomes a table of its own: parse_empty_array =
-- false does that since CC 1.100.6; older CC ignores it, so there the marker
-- is replaced after decoding.
local EMPTY_ARRAY = textutils.empty_json_array
local DECODE_OPTIONS = { parse_empty_array = false }
local freshArraysNeeded = EMPTY_ARRAY ~= nil and type(textutils.unserializeJSON) == "function"
    and textutils.unserializeJSON("[]", DECODE_OPTIONS) == EMPTY_ARRAY

local function freshArrays(v)
    if v == EMPTY_ARRAY then return {} end
    for k, x in pairs(v) do
        if type(x) == "table" then v[k] = freshArrays(x) end
    end
    return v
end

local function decodeUnguarded(text)
    local msg, err = textutils.unserializeJSON(text, DECODE_OPTIONS)
    if msg == nil then return nil, tostring(err or "not JSON") end
    if type(msg) ~= "table" or type(msg.type) ~= "string" then
        return nil, "not a JSON object with a type"
    end
    if freshArraysNeeded then msg = freshArrays(msg) end
    if text:find("\\u[dD][89abAB]") then msg = joinSurrogates(msg) end
    return msg
end

-- Every frame is decoded here, under one pcall: CC's decoder raises on some
-- malformed text, and a deeply nested frame that it still parses can
-- overflow the stack in the walks after it (freshArrays, joinSurrogates),
-- which recurse once per level. Either is a bad frame, never a crash (the
-- hello wait has no pcall around it).
local function decodeFrame(text)
    local ok, msg, err = pcall(decodeUnguarded, text)
    if not ok then return nil, tostring(msg) end
    return msg, err
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
            forgetChunk(link, chunk)
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
    link.resumeStart = wallClock() -- (pace's slices start here)
    link.pulled = link.pulled + 1
    link.chunkQueued = 0 -- (events chunks queued since this pull: see enterChunk)
    -- the program's own PACE_EVENT and CONTINUE come back (or are queued again when CC dropped them)
    ownEventBack(link, (ev[1] == PACE_EVENT or ev[1] == CONTINUE) and type(ev[2]) == "number" and ev[2] or nil)
    if ev[1] == "terminate" then
        -- In background mode Ctrl+T belongs to the player's shell.
        if not background then error(STOP, 0) end
        return ev
    end
    if (ev[1] == STOP_EVENT or link.stopAsked) and background then error(STOP, 0) end
    -- a connect given up on (CONNECT_TIMEOUT) that succeeded after all: not ours any more
    if ev[1] == "websocket_success" and ev[2] == link.wsUrl and not link.pending and type(ev[3]) == "table" then
        pcall(ev[3].close)
        return ev
    end
    if ev[1] == STATUS_EVENT and background then
        os.queueEvent(STATUS_REPLY, link.state or "starting", link.url, VERSION)
        return ev
    end
    -- The program's own pacing events never reach chunks, also when what they
    -- were queued for went with a dropped link.
    if ev[1] == B.INPUT_MARK then
        -- the send-input events queued before this mark have left CC's queue
        if type(ev[2]) == "number" then B.markBack(ev[2]) end
    elseif ev[1] == PACE_EVENT then
        if #link.answers > 0 then
            local job = table.remove(link.answers, 1)
            job.start = link.resumeStart
            runAnswer(link, job)
        end
    elseif ev[1] == CHUNK_TERMINATE then
        -- a chunk's own os.queueEvent("terminate"), for it alone (see exec.lua)
        local chunk = type(ev[2]) == "number" and link.terminates and link.terminates[ev[2]]
        if chunk then
            link.terminates[ev[2]] = nil
            if not chunk.done then
                local ok, err = pcall(deliverToChunks, link, { "terminate", n = 1 }, { chunk })
                if not ok then printError("internal error: " .. shorten(err, 200)) end
            end
        end
    elseif ev[1] == CONTINUE then
        if #link.deferred > 0 then
            local d = table.remove(link.deferred, 1)
            local ok, err = pcall(deliverToChunks, link, d.ev, d.chunks)
            if not ok then printError("internal error: " .. shorten(err, 200)) end
        end
    elseif not isOwnEvent(link, ev) then
        local ok, err = pcall(deliverToChunks, link, ev)
        if not ok then printError("internal error: " .. shorten(err, 200)) end
    end
    return ev
end

-- A timer of the program's own may never come: CC drops the event of a timer
-- that fires while its queue holds 256. The events that filled it come after,
-- so the waits below (and the connect's) also end on the first event once the time is up.
local function timeUp(link, timer, since, seconds)
    if os.clock() - since < seconds then return false end
    cancelOwnTimer(link, timer)
    return true
end

local function sleepFor(link, seconds)
    local timer, since = startOwnTimer(link, seconds), os.clock()
    repeat
        local ev = nextEvent(link)
    until (ev[1] == "timer" and ev[2] == timer) or timeUp(link, timer, since, seconds)
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

-- CC without http.websocketAsync: http.websocket pulls events until its
-- connect settles and throws away all the others (a detached job's timers,
-- "mcp-computer stop", Ctrl+T in background mode's shell ...). So it runs in a
-- coroutine of its own: the events are pulled here as always (nextEvent hands
-- them to chunks and handles the program's own), and it is resumed with the
-- websocket_success / websocket_failure ones, the only ones it looks at.
local function connectBlocking(link)
    local co = coroutine.create(http.websocket)
    link.pending = true
    local res = table.pack(coroutine.resume(co, link.wsUrl))
    local timer, since = startOwnTimer(link, CONNECT_TIMEOUT), os.clock()
    while coroutine.status(co) ~= "dead" do
        local ev = nextEvent(link)
        if ev[1] == "websocket_success" or ev[1] == "websocket_failure" then
            res = table.pack(coroutine.resume(co, table.unpack(ev, 1, ev.n)))
        elseif (ev[1] == "timer" and ev[2] == timer) or timeUp(link, timer, since, CONNECT_TIMEOUT) then
            link.pending = false
            return true, false, "no answer to the connect within " .. CONNECT_TIMEOUT .. " s"
        end
    end
    cancelOwnTimer(link, timer)
    link.pending = false
    -- as pcall(http.websocket, url) gives it
    if not res[1] then return false, res[2] end
    return true, res[2], res[3]
end

-- Opens the websocket without blocking, so Ctrl+T keeps working.
local function connect(link)
    local async = http.websocketAsync ~= nil
    local open = http.websocketAsync or function() return connectBlocking(link) end
    link.pending = async
    local ok, started, err
    if async then ok, started, err = pcall(open, link.wsUrl) else ok, started, err = open() end
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
    -- CC answers every connect (its own timeout is shorter), but drops the answer when its queue is
    -- full: after CONNECT_TIMEOUT it is tried again (a late success is closed by nextEvent).
    local timer, since = startOwnTimer(link, CONNECT_TIMEOUT), os.clock()
    while true do
        local ev = nextEvent(link)
        if ev[2] == link.wsUrl and (ev[1] == "websocket_success" or ev[1] == "websocket_failure") then
            cancelOwnTimer(link, timer)
            link.pending = false
            if ev[1] == "websocket_success" then return ev[3] end
            return nil, tostring(ev[3] or "Could not connect")
        elseif (ev[1] == "timer" and ev[2] == timer) or timeUp(link, timer, since, CONNECT_TIMEOUT) then
            link.pending = false
            return nil, "no answer to the connect within " .. CONNECT_TIMEOUT .. " s"
        end
    end
end

local function closeReason(reason, code)
    local text = reason and tostring(reason) or "connection closed"
    if code then text = text .. " (code " .. tostring(code) .. ")" end
    return text
end

-- 4410: the bridge's operator reset this id's pin (cc-mcp pin-reset): the key this link was made
-- with is no longer trusted there, so stop rather than link straight back with it; what to do next
-- is the bridge's to say (its close reason): the reset may distrust this key.
local function pinReset(reason)
    local why = (tostring(reason or ""):gsub("^pin_reset: ", ""))
    if why == "" then why = "start mcp-computer again to link" end
    return "the bridge's operator reset the pin of computer " .. os.getComputerID()
        .. " (code 4410): " .. why
end

-- The bridge wants a link token (CC_LINK_TOKEN) and ours is missing or
-- wrong: retrying cannot help, so stop and say how to fix it.
local function tokenRefused()
    printError("the bridge refused the token: set it with")
    printError("set mcp.token <token>  (or --token <token>)")
    error(FATAL, 0)
end

-- The hello is more than the bridge (its CC_MAX_FRAME_BYTES) or CC takes:
-- retrying would send the same hello, so stop and say how to fix it.
local function helloTooLarge(size, what)
    printError(("%s: this computer's hello is %d bytes."):format(what, size))
    printError("Run mcp-computer with a smaller --max-frame (at most the bridge's CC_MAX_FRAME_BYTES):"
        .. " the hello then leaves out the peripherals and jobs that do not fit.")
    error(FATAL, 0)
end

-- The bridge's frame limit (its CC_MAX_FRAME_BYTES), from hello-ok's
-- maxFrame: every frame is then sized to the smaller of it and --max-frame
-- (link.maxFrame), so a large answer is cut instead of the bridge closing the
-- link (1009). An older bridge says none: --max-frame alone. A malformed
-- value is ignored, with one warning per run. The limit is kept for the next
-- hello (a relink), which cannot know the bridge's limit before hello-ok.
-- So is its identity budget (maxIdentity, CC_MAX_IDENTITY_BYTES): info
-- frames and a relink's hello fit the smaller of it and the frame limit
-- (identity.limit); an older bridge says none.
local function bridgeLimit(link, value, maxIdentity)
    local usedForHello = identity.limit(link)
    link.bridgeMaxFrame, link.bridgeMaxIdentity = nil, nil
    if maxIdentity ~= nil and (type(maxIdentity) ~= "number" or maxIdentity ~= math.floor(maxIdentity) or maxIdentity < MIN_MAX_FRAME) then
        if not link.warnedMaxIdentity then
            link.warnedMaxIdentity = true
            warn("ignored the bridge's identity budget (hello-ok maxIdentity is not a whole number >= " .. MIN_MAX_FRAME .. ")")
        end
    elseif maxIdentity ~= nil then
        link.bridgeMaxIdentity = maxIdentity
    end
    if value ~= nil and (type(value) ~= "number" or value ~= math.floor(value) or value < MIN_MAX_FRAME) then
        if not link.warnedMaxFrame then
            link.warnedMaxFrame = true
            warn("ignored the bridge's frame limit (hello-ok maxFrame is not a whole number >= " .. MIN_MAX_FRAME .. ")")
        end
    elseif value ~= nil then
        link.bridgeMaxFrame = value
    end
    link.maxFrame = math.min(link.ownMaxFrame, link.bridgeMaxFrame or link.ownMaxFrame)
    -- the hello left out what a smaller limit did not fit: the next info frame sends it all
    -- (a hello over a smaller limit was cut by the bridge to its budget already)
    if identity.limit(link) > usedForHello and link.helloOmitted then link.sentPeripherals = nil end
end

-- Says hello and waits for hello-ok. Returns true when linked, or false, what
-- went wrong and whether that is final (no retry).
local function hello(link)
    link.maxFrame = math.min(link.ownMaxFrame, link.bridgeMaxFrame or link.ownMaxFrame)
    local frame = identity.fill({ type = "hello", computerId = os.getComputerID(), computerLabel = labelOf(), version = VERSION, token = link.token,
        key = link.key, maxFrame = link.ownMaxFrame })
    local jobsOmitted
    frame.jobs, jobsOmitted = identity.jobsList(link)
    link.sentLabel, link.sentPeripherals, link.sentJobs = frame.computerLabel, encode(frame.peripherals), encode(frame.jobs)
    link.peripheralList = frame.peripherals
    local json = encode(identity.fit(frame, identity.limit(link), jobsOmitted))
    link.helloOmitted = frame.omitted ~= nil
    if not sendJson(link, json) then
        -- CC's own limit is below --max-frame: retrying cannot help.
        if link.lost:find("too large", 1, true) then helloTooLarge(#json, "CC refused to send it") end
        return false, link.lost
    end
    local timer, since = startOwnTimer(link, HELLO_TIMEOUT), os.clock()
    while true do
        local ev = nextEvent(link)
        if (ev[1] == "timer" and ev[2] == timer) or timeUp(link, timer, since, HELLO_TIMEOUT) then
            return false, "no hello-ok from the bridge within " .. HELLO_TIMEOUT .. " s"
        elseif ev[1] == "websocket_closed" and ev[2] == link.wsUrl then
            if tonumber(ev[4]) == 4401 then tokenRefused() end
            -- 4409: the bridge holds this id for another key (CC_LINK_PIN); retrying cannot help
            if tonumber(ev[4]) == 4409 then
                printError("The bridge refused this computer: " .. closeReason(ev[3], ev[4]))
                error(FATAL, 0)
            end
            if tonumber(ev[4]) == 1009 then helloTooLarge(#json, "the bridge closed the link (1009: message too big)") end
            -- any other 4000-4999 close is the bridge's final word, as once linked (serve):
            -- retrying would send the same hello (after 4410, with the key just reset)
            local code = tonumber(ev[4])
            if code == 4410 then return false, pinReset(ev[3]), true end
            if code and code >= 4000 and code <= 4999 then
                return false, "the bridge refused this computer during the hello: " .. closeReason(ev[3], code), true
            end
            return false, "link closed during hello: " .. closeReason(ev[3], ev[4])
        elseif ev[1] == "websocket_message" and ev[2] == link.wsUrl then
            local msg, err = decodeFrame(ev[3])
            if not msg then
                warn("ignored a malformed frame (" .. shorten(err, 60) .. ")")
            elseif msg.type == "hello-ok" then
                cancelOwnTimer(link, timer)
                bridgeLimit(link, msg.maxFrame, msg.maxIdentity)
                return true
            elseif msg.type == "hello-error" and msg.code == "unauthorized" then
                tokenRefused()
            elseif msg.type == "hello-error" and msg.code == "busy" then
                cancelOwnTimer(link, timer)
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

-- How the status lines say to stop the link: Ctrl+T in front; in background
-- mode Ctrl+T belongs to the player's shell, so "mcp-computer stop".
local function stopHint()
    if background then return "mcp-computer stop ends the link." end
    return "Press Ctrl+T to stop."
end

-- Serves requests until the link drops. Returns a description of why, and
-- whether reconnecting makes sense.
local function serve(link)
    print(("linked as %d (Label: %s)"):format(os.getComputerID(), labelOf() or "null"))
    B.reportJobs(link)
    print("waiting for requests... " .. stopHint())
    link.identityTimer, link.identityTimerAt = startOwnTimer(link, identity.CHECK_EVERY), os.clock()
    while true do
        local ev = nextEvent(link)
        identity.watch(link, ev)
        if ev[2] == link.wsUrl and ev[1] == "websocket_message" then
            local ok, err = pcall(handleFrame, link, ev[3])
            if not ok then
                if err == STOP then error(STOP, 0) end
                printError("internal error: " .. shorten(err, 200))
            end
        elseif ev[2] == link.wsUrl and ev[1] == "websocket_closed" then
            local code = tonumber(ev[4])
            if code == 4410 then
                return pinReset(ev[3]), false
            elseif code and code >= 4000 and code <= 4999 then
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

-- The wait before reconnecting after `failures` failures in a row: a step of
-- 1, 2, 4 ... BACKOFF_MAX seconds, drawn from the upper half of the step (in
-- CC's 0.05 s ticks). When the bridge restarts, every computer of a server
-- loses its link in the same tick, and they all come from one address, of
-- which the bridge takes CC_HELLO_RATE hellos a second: with fixed steps they
-- would all come back in the same tick, again and again. The computer id
-- spreads them even where math.random is not seeded apart.
local function backoffDelay(failures)
    local step = math.min(BACKOFF_MAX, 2 ^ failures)
    local spread = (math.random() + os.getComputerID() * 0.6180339887) % 1
    return math.floor((step / 2 + spread * step / 2) * 20 + 0.5) / 20
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
            local ok, why, final = hello(link)
            if ok then
                linked = true
                link.state = "linked"
                problem, retry = serve(link)
            else
                problem, retry = why, not final
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
        local delay = backoffDelay(failures)
        failures = failures + 1
        attempt = attempt + 1
        link.state = "waiting to reconnect"
        local seconds = ("%.2f"):format(delay):gsub("0+$", ""):gsub("%.$", "")
        print(("retrying in %s s... %s"):format(seconds, stopHint()))
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
        if ev[2] == link.wsUrl then
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

-- For the parts after this one.
M.run, M.stopLink = run, stopLink
