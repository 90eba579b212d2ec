// fs calls on paths above the computer's root: one chunk, run on the harness
// and on CraftOS-PC. CC_ANSWERS is what CC:Tweaked answers, read from its
// sources (FSAPI: exists/isDir/isReadOnly catch the FileSystemException and
// say false, open returns nil and its message; FileSystem.sanitizePath keeps a
// leading ".."; FileSystem.getMount raises "/<path>: Invalid Path" for a path
// in no mount); the harness must give exactly these. CRAFTOS_PC_DIFFERS is
// where CraftOS-PC (its own C++ fs, not CC's Java) answers otherwise, as seen
// on v2.8.1: pinned so a change there shows.

/** Lua chunk returning { [name] = "<values joined by ,>" or "error: <message without position>" }. */
export const FS_PATHS_CODE = `
local out = {}
local function try(name, f, ...)
  local r = table.pack(pcall(f, ...))
  if not r[1] then out[name] = "error: " .. (tostring(r[2]):gsub("^[^:]*:%d+: ", "")) return end
  local parts = {}
  for i = 2, r.n do parts[#parts + 1] = tostring(r[i]) end
  out[name] = table.concat(parts, ",")
end
try("combine(..,x)", fs.combine, "..", "x")
try("combine(a,../../b)", fs.combine, "a", "../../b")
try("combine(/../x)", fs.combine, "/../x")
try("getName(../x)", fs.getName, "../x")
try("getName(..)", fs.getName, "..")
try("getDir(../x)", fs.getDir, "../x")
try("getDir(..)", fs.getDir, "..")
try("exists(../x)", fs.exists, "../x")
try("exists(a/../../x)", fs.exists, "a/../../x")
try("isDir(..)", fs.isDir, "..")
try("isReadOnly(../x)", fs.isReadOnly, "../x")
try("open(../x,r)", function() local h, e = fs.open("../x", "r") return h, e end)
try("open(../x,w)", function() local h, e = fs.open("../x", "w") return h, e end)
try("delete(../x)", fs.delete, "../x")
try("list(..)", fs.list, "..")
try("getSize(../x)", fs.getSize, "../x")
try("makeDir(../x)", fs.makeDir, "../x")
try("move(../x,y)", fs.move, "../x", "y")
try("getDrive(../x)", fs.getDrive, "../x")
try("getFreeSpace(../x)", fs.getFreeSpace, "../x")
return out`;

export const CC_ANSWERS = {
  'combine(..,x)': '../x',
  'combine(a,../../b)': '../b',
  'combine(/../x)': '../x',
  'getName(../x)': 'x',
  'getName(..)': '..',
  'getDir(../x)': '..',
  'getDir(..)': '',
  'exists(../x)': 'false',
  'exists(a/../../x)': 'false',
  'isDir(..)': 'false',
  'isReadOnly(../x)': 'false',
  'open(../x,r)': 'nil,/../x: Invalid Path',
  'open(../x,w)': 'nil,/../x: Invalid Path',
  'delete(../x)': 'error: /../x: Invalid Path',
  'list(..)': 'error: /..: Invalid Path',
  'getSize(../x)': 'error: /../x: Invalid Path',
  'makeDir(../x)': 'error: /../x: Invalid Path',
  'move(../x,y)': 'error: /../x: Invalid Path',
  'getDrive(../x)': 'error: /../x: Invalid Path',
  'getFreeSpace(../x)': 'error: /../x: Invalid Path',
};

export const CRAFTOS_PC_DIFFERS = {
  'combine(/../x)': 'x',
  'isReadOnly(../x)': 'error: /../x: Invalid path',
  'open(../x,r)': 'nil,/../x: No such file',
  'open(../x,w)': 'nil,/../x: No such file',
  'delete(../x)': '',
  'list(..)': 'error: /..: No such file',
  'getSize(../x)': 'error: /../x: No such file',
  'makeDir(../x)': 'error: /../x: Could not create directory',
  'move(../x,y)': 'error: No such file',
  'getDrive(../x)': '',
  'getFreeSpace(../x)': 'error: /../x: No such path',
};
