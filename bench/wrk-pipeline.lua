-- wrk request script: send `depth` pipelined requests per write (wrk -s bench/wrk-pipeline.lua URL -- depth)
init = function(args)
  local depth = tonumber(args[1]) or 1
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format()
  end
  req = table.concat(r)
end

request = function()
  return req
end
