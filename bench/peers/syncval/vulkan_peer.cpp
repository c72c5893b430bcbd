#include "bench/peers/syncval/vulkan_peer.h"

#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <unistd.h>

namespace qvet::peers {

namespace {

struct CommandBuffer {
  VkCommandBuffer cb = VK_NULL_HANDLE;
  // The trace command of each call syncval numbers (its seq_no, from 1): dispatches, copies,
  // pipeline barriers and event sets, not binds or pushes.
  std::vector<uint32_t> numbered;
};

std::string vk_error(const char* what, VkResult r) { return std::string(what) + " failed (VkResult " + std::to_string(int(r)) + ")"; }

}  // namespace

struct VulkanPeer::Impl {
  bool syncval;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties mem_props{};
  PFN_vkCmdPushDescriptorSetKHR push_descriptors = nullptr;
  PFN_vkSetDebugUtilsObjectNameEXT set_name = nullptr;
  std::string shader_dir;
  struct Pipeline {
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
  };
  std::map<std::pair<uint32_t, uint32_t>, Pipeline> pipelines;  // (reads, writes) -> pipeline
  struct Message {
    std::string id, text;
    uint32_t cmd;  // the trace command being recorded when syncval spoke (kNone: none)
    size_t cb;     // its command buffer
  };
  std::vector<Message> messages;  // syncval's messages of this run
  uint32_t current = kNone;       // the trace command being recorded
  size_t current_cb = 0;

  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* d, void* self) {
    std::string id = d->pMessageIdName ? d->pMessageIdName : "";
    Impl& m = *static_cast<Impl*>(self);
    if (id.rfind("SYNC-", 0) == 0) m.messages.push_back({id, d->pMessage ? d->pMessage : "", m.current, m.current_cb});
    return VK_FALSE;
  }

  std::string open();
  std::string pipeline(uint32_t nr, uint32_t nw, Pipeline& out);
  ~Impl();
};

VulkanPeer::VulkanPeer(bool syncval) : impl_(std::make_unique<Impl>()) { impl_->syncval = syncval; }
VulkanPeer::~VulkanPeer() = default;
std::string VulkanPeer::open() { return impl_->open(); }
uint64_t VulkanPeer::storage_alignment() const { return impl_->props.limits.minStorageBufferOffsetAlignment; }

std::string VulkanPeer::Impl::open() {
  if (syncval) {
    uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> layers(n);
    vkEnumerateInstanceLayerProperties(&n, layers.data());
    bool found = false;
    for (auto& l : layers) found |= std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    if (!found) return "the Khronos validation layer is not installed (Debian: vulkan-validationlayers)";
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "qvet-syncval";
  app.apiVersion = VK_API_VERSION_1_2;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  // Synchronization validation alone: the other validation objects are off, so the layer's cost
  // is syncval's (plus the layer's dispatch).
  VkValidationFeatureEnableEXT enable[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeatureDisableEXT disable[] = {VK_VALIDATION_FEATURE_DISABLE_CORE_CHECKS_EXT, VK_VALIDATION_FEATURE_DISABLE_THREAD_SAFETY_EXT,
                                             VK_VALIDATION_FEATURE_DISABLE_API_PARAMETERS_EXT,
                                             VK_VALIDATION_FEATURE_DISABLE_OBJECT_LIFETIMES_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enable;
  features.disabledValidationFeatureCount = 4;
  features.pDisabledValidationFeatures = disable;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  if (syncval) {
    ici.pNext = &features;
    ici.enabledLayerCount = 1;
    ici.ppEnabledLayerNames = &layer;
    ici.enabledExtensionCount = 1;
    ici.ppEnabledExtensionNames = &ext;
  }
  if (syncval) {
    // Hazards between command buffers are checked at vkQueueSubmit only when this (in this
    // layer version, alpha) check is enabled; the layer reads it from the environment.
    std::string enables = std::getenv("VK_LAYER_ENABLES") ? std::getenv("VK_LAYER_ENABLES") : "";
    if (enables.find("QUEUE_SUBMIT") == std::string::npos)
      setenv("VK_LAYER_ENABLES", ((enables.empty() ? "" : enables + ",") + "VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT").c_str(), 1);
  }
  if (VkResult r = vkCreateInstance(&ici, nullptr, &instance); r != VK_SUCCESS) return vk_error("vkCreateInstance", r);
  if (syncval) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    mci.pfnUserCallback = on_message;
    mci.pUserData = this;
    if (!create || create(instance, &mci, nullptr, &messenger) != VK_SUCCESS) return "cannot create the debug messenger";
  }
  // The CPU device (lavapipe), so that the comparison runs anywhere; any device otherwise.
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> devs(n);
  vkEnumeratePhysicalDevices(instance, &n, devs.data());
  for (VkPhysicalDevice d : devs) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(d, &p);
    if (!phys || p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) phys = d, props = p;
  }
  if (!phys) return "no Vulkan device (Debian: mesa-vulkan-drivers gives lavapipe, a CPU one)";
  vkGetPhysicalDeviceMemoryProperties(phys, &mem_props);
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, fams.data());
  family = UINT32_MAX;
  for (uint32_t i = 0; i < n && family == UINT32_MAX; ++i)
    if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = i;
  if (family == UINT32_MAX) return "the Vulkan device has no compute queue";
  float prio = 1;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  const char* dev_ext = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = 1;
  dci.ppEnabledExtensionNames = &dev_ext;
  if (VkResult r = vkCreateDevice(phys, &dci, nullptr, &device); r != VK_SUCCESS)
    return vk_error("vkCreateDevice (with VK_KHR_push_descriptor)", r);
  vkGetDeviceQueue(device, family, 0, &queue);
  push_descriptors = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(vkGetDeviceProcAddr(device, "vkCmdPushDescriptorSetKHR"));
  if (syncval) set_name = reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(vkGetDeviceProcAddr(device, "vkSetDebugUtilsObjectNameEXT"));
  char dir[] = "/tmp/qvet-syncval-XXXXXX";
  if (!mkdtemp(dir)) return "cannot make a temporary directory for shaders";
  shader_dir = dir;
  return "";
}

// The shader of an exec with `nr` read and `nw` write ranges: bindings 0..nr-1 readonly,
// nr..nr+nw-1 writeonly. It touches them only under a push constant that is 0, so it costs
// nothing to run, while syncval, which reads the SPIR-V, sees each binding's access.
std::string VulkanPeer::Impl::pipeline(uint32_t nr, uint32_t nw, Pipeline& out) {
  if (auto it = pipelines.find({nr, nw}); it != pipelines.end()) return out = it->second, "";
  std::ostringstream glsl;
  glsl << "#version 450\nlayout(local_size_x = 1) in;\nlayout(push_constant) uniform P { uint touch; } pc;\n";
  for (uint32_t i = 0; i < nr + nw; ++i)
    glsl << "layout(std430, set = 0, binding = " << i << ") " << (i < nr ? "readonly" : "writeonly") << " buffer B" << i
         << " { uint d[]; } b" << i << ";\n";
  glsl << "void main() {\n  uint acc = 0u;\n  if (pc.touch != 0u) {\n";
  for (uint32_t i = 0; i < nr; ++i) glsl << "    acc += b" << i << ".d[0];\n";
  for (uint32_t i = nr; i < nr + nw; ++i) glsl << "    b" << i << ".d[0] = acc;\n";
  glsl << "  }\n}\n";
  std::string base = shader_dir + "/r" + std::to_string(nr) + "w" + std::to_string(nw);
  std::ofstream(base + ".comp") << glsl.str();
  std::string cmd = "glslangValidator -V -o " + base + ".spv " + base + ".comp >" + base + ".log 2>&1";
  if (std::system(cmd.c_str()) != 0) return "glslangValidator failed (Debian: glslang-tools); see " + base + ".log";
  std::ifstream in(base + ".spv", std::ios::binary);
  std::string spv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = spv.size();
  smi.pCode = reinterpret_cast<const uint32_t*>(spv.data());
  VkShaderModule module;
  if (VkResult r = vkCreateShaderModule(device, &smi, nullptr, &module); r != VK_SUCCESS) return vk_error("vkCreateShaderModule", r);
  std::vector<VkDescriptorSetLayoutBinding> bindings(nr + nw);
  for (uint32_t i = 0; i < nr + nw; ++i) bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dl.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  dl.bindingCount = nr + nw;
  dl.pBindings = bindings.data();
  Pipeline p;
  vkCreateDescriptorSetLayout(device, &dl, nullptr, &p.set_layout);
  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &p.set_layout;
  pl.pushConstantRangeCount = 1;
  pl.pPushConstantRanges = &pcr;
  vkCreatePipelineLayout(device, &pl, nullptr, &p.layout);
  VkComputePipelineCreateInfo cp{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cp.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, module, "main", nullptr};
  cp.layout = p.layout;
  VkResult r = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cp, nullptr, &p.pipeline);
  vkDestroyShaderModule(device, module, nullptr);
  if (r != VK_SUCCESS) return vk_error("vkCreateComputePipelines", r);
  pipelines[{nr, nw}] = p;
  out = p;
  return "";
}

VulkanPeer::Impl::~Impl() {
  if (device) {
    vkDeviceWaitIdle(device);
    for (auto& [k, p] : pipelines) {
      vkDestroyPipeline(device, p.pipeline, nullptr);
      vkDestroyPipelineLayout(device, p.layout, nullptr);
      vkDestroyDescriptorSetLayout(device, p.set_layout, nullptr);
    }
    vkDestroyDevice(device, nullptr);
  }
  if (messenger) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance, messenger, nullptr);
  }
  if (instance) vkDestroyInstance(instance, nullptr);
  if (!shader_dir.empty()) {
    std::error_code ec;  // best effort: a temporary directory
    std::filesystem::remove_all(shader_dir, ec);
  }
}

PeerRun VulkanPeer::run(const Trace& t) {
  Impl& m = *impl_;
  PeerRun out;
  m.messages.clear();
  const Program& p = *t.program;
  // One VkBuffer per base buffer, as large as its accesses reach.
  std::vector<uint64_t> size(p.buffers.size(), 16);
  for (const Access& a : t.accesses) size[a.buffer] = std::max(size[a.buffer], (a.hi + 15) / 16 * 16);
  std::vector<VkBuffer> bufs(p.buffers.size(), VK_NULL_HANDLE);
  std::vector<VkDeviceMemory> mems(p.buffers.size(), VK_NULL_HANDLE);
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    if (p.buffers[b].is_view()) continue;
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = size[b];
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    vkCreateBuffer(m.device, &bi, nullptr, &bufs[b]);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(m.device, bufs[b], &req);
    uint32_t type = 0;
    while (type < m.mem_props.memoryTypeCount && !(req.memoryTypeBits & (1u << type))) ++type;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    vkAllocateMemory(m.device, &ai, nullptr, &mems[b]);
    vkBindBufferMemory(m.device, bufs[b], mems[b], 0);
    if (m.set_name) {
      VkDebugUtilsObjectNameInfoEXT ni{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
      ni.objectType = VK_OBJECT_TYPE_BUFFER;
      ni.objectHandle = uint64_t(bufs[b]);
      ni.pObjectName = p.buffers[b].name.c_str();
      m.set_name(m.device, &ni);
    }
  }
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = m.family;
  VkCommandPool pool;
  vkCreateCommandPool(m.device, &cpi, nullptr, &pool);
  // Pipelines first: compiling shaders is not recording.
  for (const TraceCmd& c : t.cmds) {
    if (c.op != CmdOp::Exec) continue;
    uint32_t nr = 0, nw = 0;
    for (uint32_t a = c.acc_begin; a < c.acc_end; ++a) (t.accesses[a].write ? nw : nr)++;
    Impl::Pipeline pl;
    if (std::string e = m.pipeline(nr, nw, pl); !e.empty()) return out.skipped = e, out;
  }
  std::vector<CommandBuffer> cbs;
  out.cb_of.assign(t.cmds.size(), kNone);
  // A device signal ends the command buffer, which is submitted with a fence (set when every
  // command submitted so far has ended); a host wait waits for the fence of the first signal that
  // satisfies it. Syncval follows fence waits, so it knows what a host wait ordered.
  std::vector<VkFence> fences;
  std::vector<std::pair<uint32_t, VkFence>> signal_fence;  // trace command id of a signal -> its fence
  bool open_cb = false;
  std::pair<uint32_t, uint32_t> bound{UINT32_MAX, UINT32_MAX};
  auto begin_cb = [&] {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    CommandBuffer cb;
    vkAllocateCommandBuffers(m.device, &ai, &cb.cb);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cb.cb, &bi);
    m.current_cb = cbs.size();
    cbs.push_back(std::move(cb));
    open_cb = true;
    bound = {UINT32_MAX, UINT32_MAX};
  };
  auto submit_cb = [&](VkFence fence) {
    if (!open_cb && fence == VK_NULL_HANDLE) return;
    if (!open_cb) begin_cb();  // a signal with nothing before it in its batch: an empty buffer
    m.current = kNone;
    vkEndCommandBuffer(cbs.back().cb);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cbs.back().cb;
    vkQueueSubmit(m.queue, 1, &si, fence);
    open_cb = false;
  };
  VkMemoryBarrier full{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  full.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  full.dstAccessMask = full.srcAccessMask;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  auto t0 = std::chrono::steady_clock::now();
  for (const HostEvent& h : t.host) {
    if (h.op == HostOp::Wait) {
      for (auto& [id, fence] : signal_fence)
        if (t.cmds[id].signal == h.signal && t.cmds[id].value >= h.value) {
          vkWaitForFences(m.device, 1, &fence, VK_TRUE, UINT64_MAX);
          break;
        }
      continue;
    }
    if (h.op != HostOp::Submit) continue;
    for (uint32_t id = h.cmd_begin; id < h.cmd_end; ++id) {
      const TraceCmd& c = t.cmds[id];
      if (c.op == CmdOp::Signal) {
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence f;
        vkCreateFence(m.device, &fi, nullptr, &f);
        fences.push_back(f);
        submit_cb(f);
        out.cb_of[id] = uint32_t(cbs.size() - 1);
        signal_fence.push_back({id, f});
        continue;
      }
      if (!open_cb) begin_cb();
      CommandBuffer& cb = cbs.back();
      m.current = id;
      out.cb_of[id] = uint32_t(cbs.size() - 1);
      if (c.op == CmdOp::Exec) {
        std::vector<VkDescriptorBufferInfo> infos;
        uint32_t nw = 0;
        for (int pass = 0; pass < 2; ++pass)  // reads, then writes: the shader's binding order
          for (uint32_t a = c.acc_begin; a < c.acc_end; ++a)
            if (const Access& x = t.accesses[a]; x.write == (pass == 1)) infos.push_back({bufs[x.buffer], x.lo, x.hi - x.lo}), nw += x.write;
        std::pair<uint32_t, uint32_t> key{uint32_t(infos.size()) - nw, nw};
        const Impl::Pipeline& pl = m.pipelines.at(key);
        if (bound != key) vkCmdBindPipeline(cb.cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl.pipeline), bound = key;
        if (!infos.empty()) {
          std::vector<VkWriteDescriptorSet> writes(infos.size());
          for (uint32_t i = 0; i < infos.size(); ++i) {
            writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            writes[i].dstBinding = i;
            writes[i].descriptorCount = 1;
            writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            writes[i].pBufferInfo = &infos[i];
          }
          m.push_descriptors(cb.cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl.layout, 0, uint32_t(writes.size()), writes.data());
        }
        uint32_t zero = 0;
        vkCmdPushConstants(cb.cb, pl.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &zero);
        vkCmdDispatch(cb.cb, 1, 1, 1);
      } else if (c.op == CmdOp::Copy) {
        const Access& src = t.accesses[c.acc_begin];
        const Access& dst = t.accesses[c.acc_begin + 1];
        VkBufferCopy region{src.lo, dst.lo, src.hi - src.lo};
        vkCmdCopyBuffer(cb.cb, bufs[src.buffer], bufs[dst.buffer], 1, &region);
      } else if (c.op == CmdOp::Barrier) {
        vkCmdPipelineBarrier(cb.cb, stages, stages, 0, 1, &full, 0, nullptr, 0, nullptr);
      } else if (c.op == CmdOp::MemoryBarrier) {
        // Holds the front end only: no earlier command is in its first scope.
        VkMemoryBarrier none{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        none.dstAccessMask = full.dstAccessMask;
        vkCmdPipelineBarrier(cb.cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, stages, 0, 1, &none, 0, nullptr, 0, nullptr);
      }
      cb.numbered.push_back(id);
    }
    submit_cb(VK_NULL_HANDLE);
  }
  vkQueueWaitIdle(m.queue);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Each message's commands. While recording, the command is the one being recorded and
  // "seq_no: N" numbers the prior access in the same command buffer. At vkQueueSubmit, the
  // message names the submitted buffer and the seq_no of its access, then the prior's buffer
  // ("command_buffer: VkCommandBuffer 0x...") and seq_no.
  std::map<uint64_t, size_t> by_handle;
  for (size_t i = 0; i < cbs.size(); ++i) by_handle[uint64_t(cbs[i].cb)] = i;
  auto at = [&](size_t cb, size_t seq) { return cb < cbs.size() && seq >= 1 && seq <= cbs[cb].numbered.size() ? cbs[cb].numbered[seq - 1] : kNone; };
  auto handle = [&](const std::string& hex) -> size_t {
    auto it = by_handle.find(std::stoull(hex, nullptr, 16));
    return it == by_handle.end() ? SIZE_MAX : it->second;
  };
  static const std::regex seq_re("seq_no: ([0-9]+)"), cb_re("VkCommandBuffer 0x([0-9a-f]+)"), prior_cb_re("command_buffer: VkCommandBuffer 0x([0-9a-f]+)");
  for (const Impl::Message& msg : m.messages) {
    Hazard hz{msg.id, kNone, kNone, msg.cmd == kNone, msg.text};
    std::vector<size_t> seqs;
    for (std::sregex_iterator it(msg.text.begin(), msg.text.end(), seq_re), end; it != end; ++it) seqs.push_back(std::stoull((*it)[1]));
    std::smatch mt;
    if (msg.cmd != kNone) {
      hz.cmd = msg.cmd;
      if (!seqs.empty()) hz.prior = at(msg.cb, seqs[0]);
    } else if (seqs.size() >= 2 && std::regex_search(msg.text, mt, cb_re)) {
      hz.cmd = at(handle(mt[1]), seqs[0]);
      if (std::regex_search(msg.text, mt, prior_cb_re)) hz.prior = at(handle(mt[1]), seqs[1]);
    }
    out.hazards.push_back(std::move(hz));
  }
  for (VkFence f : fences) vkDestroyFence(m.device, f, nullptr);
  vkDestroyCommandPool(m.device, pool, nullptr);
  for (size_t b = 0; b < bufs.size(); ++b) {
    if (bufs[b]) vkDestroyBuffer(m.device, bufs[b], nullptr);
    if (mems[b]) vkFreeMemory(m.device, mems[b], nullptr);
  }
  return out;
}

}  // namespace qvet::peers
