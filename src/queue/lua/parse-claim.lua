-- parse(v): an event claim's value `<owner>|<expiresAt>` as owner, expiresAt (nil, 0 when it is
-- not a claim, e.g. `done`).
local function parse(v)
  local bar = string.find(v, '|', 1, true)
  if not bar then return nil, 0 end
  return string.sub(v, 1, bar - 1), tonumber(string.sub(v, bar + 1)) or 0
end
