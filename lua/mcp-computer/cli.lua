-- mcp-computer part cli.lua: the command line: usage, settings, install, startup, background mode and main.
-- scripts/build-lua.js joins the parts into the one program the bridge serves (see core.lua).

-- From the parts before this one (see M in core.lua).
local B, computerKey, run, stopLink = M.B, M.computerKey, M.run, M.stopLink

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
    settings.define("mcp.key", {
        description = "This computer's own key: the bridge holds its id for it (made on the first run; never share it)",
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

-- The address the link dials: the URL with a query of its own. CC names a
-- websocket's events (websocket_success, _message, _closed) only by the
-- address dialled, so a chunk that opened a websocket to the bridge's URL
-- had its events taken for the link's: its success was closed as a late
-- connect of the link's, and that close dropped the link. The bridge takes
-- any path and query.
local LINK_QUERY = "mcp-computer-link"
local function dialUrl(url)
    local base, fragment = url:match("^([^#]*)(.*)$")
    return base .. (base:find("?", 1, true) and "&" or "?") .. LINK_QUERY .. fragment
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

-- One word of a command line for CC's shell, which splits at spaces and tabs
-- and keeps a "quoted" run whole (shell.run joins its arguments with spaces
-- first, so a Lua string per word does not keep one together). The shell has
-- no escapes: a word holding a double quote cannot be passed at all.
local function shellWord(word, what)
    if word:find('"', 1, true) then
        usageError(what .. " holds a double quote, which CC's shell cannot pass on a command line"
            .. (what == "the --token value" and ": set mcp.token instead" or ""))
    end
    if word == "" or word:find("[ \t]") then return '"' .. word .. '"' end
    return word
end

local function shellWords(words)
    local out = {}
    for i, w in ipairs(words) do
        out[i] = shellWord(w, words[i - 1] == "--token" and "the --token value" or "the argument " .. shorten(w, 40))
    end
    return out
end

local function startupCommand(opts)
    local target = opts.startupArg
    if target == nil then
        -- as when linking: without a URL the saved mcp.url is used
        local saved = settings.get("mcp.url")
        if type(saved) == "string" and saved ~= "" then target = saved end
    end
    if target == nil then usageError("startup needs a URL or off (or set mcp.url)") end
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

    local flags = {}
    if not opts.foreground then flags = { "--background", "--from-startup" } end
    for _, a in ipairs(opts.extra) do flags[#flags + 1] = a end
    local words = shellWords(flags) -- refused before anything is saved
    local program = selfPath() or installSelf(url)
    local args = { string.format("%q", shellWord(program, "the program's path")), string.format("%q", shellWord(url, "the URL")) }
    for _, a in ipairs(words) do args[#args + 1] = string.format("%q", a) end
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

-- A background link's state, kept where `mcp-computer status` reads it
-- (tabs and parallel's coroutines share _G): asking with an event and
-- waiting for one back fails when CC's queue is full, which drops either
-- event silently (a program before the link's tab that queues an event for
-- each it takes keeps it full), and said no link was running.
local LINK_STATE = "mcp_computer_link_state"

local function publishState(link)
    -- stop() asks the link to stop at its next event (nextEvent), whether or not STOP_EVENT arrives
    local shown = setmetatable({ url = link.url, version = VERSION, stop = function() link.stopAsked = true end }, {
        __index = function(_, key) if key == "state" then return link.state end end,
    })
    _G[LINK_STATE] = shown
    return shown
end

local function unpublishState(shown)
    if rawget(_G, LINK_STATE) == shown then _G[LINK_STATE] = nil end
end

local function statusCommand()
    local shown, reply = rawget(_G, LINK_STATE), nil
    if type(shown) == "table" and shown.state ~= nil and shown.state ~= "stopped" then
        reply = { nil, shown.state, shown.url, shown.version }
    else
        -- a link of an older version answers only this
        os.queueEvent(STATUS_EVENT)
        reply = awaitEvent(STATUS_REPLY, 1)
    end
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
    local shown = rawget(_G, LINK_STATE)
    if type(shown) == "table" and type(shown.stop) == "function" and shown.state ~= "stopped" then
        shown.stop()
        os.queueEvent(STOP_EVENT) -- wakes the link; if CC drops it, the link stops at its next event
        local timer, since = os.startTimer(3), os.clock()
        while shown.state ~= "stopped" do
            local ev = table.pack(os.pullEvent())
            if (ev[1] == "timer" and ev[2] == timer) or os.clock() - since >= 3 then break end
        end
        os.cancelTimer(timer)
        if shown.state == "stopped" then return print("Stopped the background link.") end
        return print("Asked the background link to stop; it stops at its next event.")
    end
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
    link.shown = publishState(link)
    local ok, err = pcall(run, link)
    stopLink(link)
    link.state = "stopped"
    unpublishState(link.shown)
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
-- The launcher's tab (the shell read-screen reads) and the link's, as
-- multishell numbered them at launch; see B.checkFocus.
local SHELL_TABS = "mcp_computer_shell_tabs"

local function startBackground(opts, link, screen, tabs)
    background = { monitor = nil, screen = screen, tabs = tabs }
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
        -- (the new tab starts running inside openTab: it takes this table, filled in after)
        local tabs = { shell = multishell.getCurrent() }
        tabs.entry = B.tabEntry(tabs.shell)
        -- The shell's exit (what the exit program calls) ends its tab, unless
        -- it is a shell run inside another; see B.shellTab.
        local exit = shell.exit
        if type(exit) == "function" then
            shell.exit = function(...)
                tabs.exited = true
                return exit(...)
            end
        end
        _G[SHELL_TABS] = tabs
        local words = { program, link.url, "--service" }
        for _, a in ipairs(opts.extra) do words[#words + 1] = a end
        local id = shell.openTab(table.concat(shellWords(words), " "))
        tabs.link = id
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
    link.state = "stopped" -- the link's coroutine went with the shell's
    unpublishState(link.shown)
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
        key = computerKey(),
        url = url, wsUrl = dialUrl(url), once = opts.once, exec = opts.exec, maxFrame = opts.maxFrame, ownMaxFrame = opts.maxFrame,
        chunks = {}, order = {}, deferred = {}, answers = {}, hinted = {}, jobs = {}, ownTimers = {}, ownQueued = {}, ownSeq = 0, pulled = 0,
    }
    if opts.service then
        local screen, tabs = rawget(_G, SHELL_SCREEN), rawget(_G, SHELL_TABS)
        _G[SHELL_SCREEN], _G[SHELL_TABS] = nil, nil
        startBackground(opts, link, screen, type(tabs) == "table" and tabs or nil)
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
