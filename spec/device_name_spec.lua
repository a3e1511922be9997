-- tfdev.device_name: TensorFlow's DeviceNameUtils through Lua.
local tfdev = require "tfdev"
local h = require "spec.support.helpers"
local dn = tfdev.device_name

describe("tfdev.device_name", function()
  describe("parse", function()
    it("parses full names", function()
      assert.are.same({ job = "a", replica = 0, task = 1, type = "GPU", id = 2 },
        dn.parse("/job:a/replica:0/task:1/device:GPU:2"))
    end)

    it("parses legacy names, upper- and lower-case", function()
      assert.are.same({ job = "a", replica = 0, task = 1, type = "GPU", id = 2 }, dn.parse("/job:a/replica:0/task:1/gpu:2"))
      assert.are.same({ type = "CPU", id = 0 }, dn.parse("/cpu:0"))
      assert.are.same({ type = "CPU", id = 3 }, dn.parse("/CPU:3"))
    end)

    it("leaves wildcards and missing parts nil", function()
      assert.are.same({ type = "CPU" }, dn.parse("/device:CPU:*"))
      assert.are.same({ job = "w" }, dn.parse("/job:w"))
      assert.are.same({}, dn.parse("/job:*/replica:*/task:*"))
      assert.are.same({}, dn.parse("/"))
    end)

    it("returns nil and an error for malformed names", function()
      for _, bad in ipairs { "/job:123", "/job:a/replica:x", "job:a", "/device:GPU:x", "/job:a/foo", "/task:-1",
        "/replica:99999999999", "CPU:0", "/job:a b" } do
        local err = h.fails("INVALID_ARGUMENT", bad, dn.parse(bad))
        assert.truthy(err.message:find("could not parse device name", 1, true))
      end
      h.fails("INVALID_ARGUMENT", "position 15: expected a number", dn.parse("/job:a/replica:x"))
    end)
  end)

  describe("names", function()
    local p = { job = "worker", replica = 1, task = 3, type = "GPU", id = 2 }

    it("writes full, legacy, local and canonical names", function()
      assert.are.equal("/job:worker/replica:1/task:3/device:GPU:2", dn.full_name(p))
      assert.are.equal("/job:worker/replica:1/task:3/gpu:2", dn.legacy_name(p))
      assert.are.equal("/device:GPU:2", dn.local_name(p))
      assert.are.equal("/job:worker/replica:1/task:3/device:GPU:2", dn.canonical_name(p))
      assert.are.equal("/job:w/device:CPU:*", dn.canonical_name { job = "w", type = "CPU" })
      assert.are.equal("/job:worker/replica:1/task:3/device:GPU:2", dn.full_name("/job:worker/replica:1/task:3/gpu:2"))
    end)

    it("refuses incomplete names where a full one is needed", function()
      h.raises("INVALID_ARGUMENT", "'/job:w/device:CPU:*' is not complete", dn.full_name, { job = "w", type = "CPU" })
      h.raises("INVALID_ARGUMENT", "needs a device type and id", dn.local_name, { job = "w" })
    end)

    it("refuses malformed name tables", function()
      h.raises("INVALID_ARGUMENT", "field job", dn.full_name, { job = "1x", replica = 0, task = 0, type = "CPU", id = 0 })
      h.raises("INVALID_ARGUMENT", "field id must be a non-negative integer", dn.canonical_name, { type = "CPU", id = -1 })
      h.raises("INVALID_ARGUMENT", "expected a device name", dn.canonical_name, 42)
      h.raises("INVALID_ARGUMENT", "could not parse", dn.canonical_name, "nonsense")
    end)

    it("canonicalizes local and full names against a base", function()
      local base = "/job:foo/replica:10/task:0/device:CPU:1"
      assert.are.equal("/job:foo/replica:10/task:0/device:CPU:0", dn.canonicalize("CPU:0", base))
      assert.are.equal("/job:foo/replica:10/task:0/device:GPU:2", dn.canonicalize("/device:GPU:2", base))
      h.fails("INVALID_ARGUMENT", "should be fully specified", dn.canonicalize("CPU:0", "/job:foo"))
    end)
  end)

  describe("matching", function()
    local full = "/job:work/replica:1/task:3/device:GPU:2"

    it("matches specs against names", function()
      for _, spec in ipairs { "/job:work", "/device:GPU:2", "/gpu:*", "/job:*/device:GPU:*", "" } do
        assert.is_true(dn.is_specification(spec, full), spec)
      end
      for _, spec in ipairs { "/job:other", "/replica:0", "/device:CPU:2", "/gpu:1" } do
        assert.is_false(dn.is_specification(spec, full), spec)
      end
      assert.is_false(dn.is_specification(full, "/job:work/device:GPU:*"))
    end)

    it("DeviceNameUtilsTest.IsCompleteSpecification: a pattern against a complete name", function()
      local name = "/job:work/replica:1/task:3/device:GPU:2"
      for _, pattern in ipairs { "", "/job:work", "/job:work/replica:1/task:3", "/device:GPU:2", "/gpu:*", name } do
        assert.is_true(dn.is_complete_specification(pattern, name), pattern)
      end
      for _, pattern in ipairs { "/job:other", "/replica:0", "/task:2", "/device:CPU:2", "/gpu:1" } do
        assert.is_false(dn.is_complete_specification(pattern, name), pattern)
      end
      -- TensorFlow CHECK-fails on a name that is not complete; tfdev says which name.
      h.fails("INVALID_ARGUMENT", "'/job:work/device:GPU:*' is not complete",
        dn.is_complete_specification("/job:work", "/job:work/device:GPU:*"))
    end)

    it("knows complete names and address spaces", function()
      assert.is_true(dn.is_complete(full))
      assert.is_false(dn.is_complete("/job:work/device:GPU:*"))
      assert.is_true(dn.is_same_address_space("/job:w/replica:0/task:1/cpu:0", "/job:w/replica:0/task:1/gpu:3"))
      assert.is_false(dn.is_same_address_space("/job:w/replica:0/task:1/cpu:0", "/job:w/replica:0/task:2/cpu:0"))
      assert.is_false(dn.is_same_address_space("/job:w/cpu:0", "/job:w/cpu:0"))
    end)
  end)

  describe("merge", function()
    it("merges compatible specs", function()
      assert.are.same({ job = "foo", replica = 1, task = 2, type = "GPU", id = 0 },
        dn.merge("/job:foo/replica:1", "/task:2/device:GPU:0"))
      assert.are.same({ type = "GPU", id = 1 }, dn.merge("/device:GPU:*", "/device:GPU:1"))
    end)

    it("refuses conflicts without soft placement", function()
      h.fails("INVALID_ARGUMENT", "incompatible types: '/device:GPU:0' and '/device:CPU:0'",
        dn.merge("/device:GPU:0", "/device:CPU:0"))
      h.fails("INVALID_ARGUMENT", "incompatible ids", dn.merge("/device:GPU:0", "/device:GPU:1"))
      h.fails("INVALID_ARGUMENT", "incompatible jobs", dn.merge("/job:a", "/job:b", true))
    end)

    it("drops conflicting type and id with soft placement", function()
      assert.are.same({ job = "a" }, dn.merge("/job:a/device:GPU:0", "/device:CPU:0", true))
      assert.are.same({ job = "a", type = "GPU" }, dn.merge("/job:a/device:GPU:0", "/device:GPU:1", true))
    end)
  end)

  describe("split", function()
    it("splits task and device parts", function()
      local task, dev = dn.split("/job:a/replica:0/task:1/device:GPU:2")
      assert.are.equal("/job:a/replica:0/task:1", task)
      assert.are.equal("GPU:2", dev)
      task, dev = dn.split("/cpu:0")
      assert.are.equal("", task)
      assert.are.equal("CPU:0", dev)
    end)

    it("fails on names without a device", function()
      h.fails("INVALID_ARGUMENT", "no device type and id", dn.split("/job:a/replica:0"))
      h.fails("INVALID_ARGUMENT", "could not parse", dn.split("junk"))
    end)
  end)
end)
