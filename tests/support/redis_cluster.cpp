#include <tests/support/redis_cluster.hpp>

#include <sstream>
#include <stdexcept>
#include <thread>

namespace jitcache::testing {

namespace {

using Clock = std::chrono::steady_clock;

bool says_ok(const std::string& cluster_info) {
  return cluster_info.find("cluster_state:ok") != std::string::npos &&
         cluster_info.find("cluster_slots_assigned:16384") != std::string::npos;
}

}  // namespace

RedisCluster::RedisCluster(std::size_t masters, RedisServerOptions node_options) : m_password(node_options.password) {
  if (masters < 3) throw std::invalid_argument("RedisCluster: redis-cli --cluster create needs 3 masters or more");
  node_options.cluster_enabled = true;
  node_options.unix_socket_only = false;
  node_options.directory.clear();
  for (std::size_t i = 0; i < masters; ++i) m_nodes.push_back(std::make_unique<RedisServer>(node_options));

  std::vector<std::string> args{"--cluster", "create"};
  for (const auto& node : m_nodes) args.push_back(node->address());
  args.insert(args.end(), {"--cluster-replicas", "0", "--cluster-yes"});
  const auto auth = auth_args();
  args.insert(args.end(), auth.begin(), auth.end());
  run_redis_cli(args);
  wait_until_ok();
}

std::vector<std::string> RedisCluster::auth_args() const {
  if (m_password.empty()) return {};
  return {"-a", m_password, "--no-auth-warning"};
}

std::string RedisCluster::seeds() const {
  std::string text;
  for (const auto& node : m_nodes) text += (text.empty() ? "" : ",") + node->address();
  return text;
}

std::string RedisCluster::node_id(std::size_t index) const {
  std::string id = node(index).cli({"CLUSTER", "MYID"});
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
  return id;
}

std::vector<std::size_t> RedisCluster::slot_owners() const {
  std::vector<std::size_t> owners(16384, m_nodes.size());
  for (const auto& asked : m_nodes) {
    if (!asked->running()) continue;
    // CLUSTER NODES: "<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <state> <slots>..."
    std::istringstream lines(asked->cli({"CLUSTER", "NODES"}));
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string id, address, flags, master, ping, pong, epoch, state;
      fields >> id >> address >> flags >> master >> ping >> pong >> epoch >> state;
      const auto colon = address.rfind(':');
      const std::string port = address.substr(colon + 1, address.find('@') - colon - 1);
      std::size_t index = m_nodes.size();
      for (std::size_t i = 0; i < m_nodes.size(); ++i) {
        if (std::to_string(m_nodes[i]->port()) == port) index = i;
      }
      for (std::string range; fields >> range;) {
        if (range.front() == '[') continue;  // a slot being migrated or imported
        const auto dash = range.find('-');
        const int first = std::stoi(range.substr(0, dash));
        const int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
        for (int slot = first; slot <= last && slot < 16384; ++slot) owners[static_cast<std::size_t>(slot)] = index;
      }
    }
    break;
  }
  return owners;
}

std::size_t RedisCluster::owner_of_slot(int slot) const {
  const auto owner = slot_owners().at(static_cast<std::size_t>(slot));
  if (owner == m_nodes.size()) throw std::runtime_error("RedisCluster: no node serves slot " + std::to_string(slot));
  return owner;
}

void RedisCluster::reshard(std::size_t from, std::size_t to, std::size_t slots, std::size_t keys_per_migrate) {
  std::vector<std::string> args{"--cluster", "reshard", node(from).address()};
  args.insert(args.end(), {"--cluster-from", node_id(from), "--cluster-to", node_id(to)});
  args.insert(args.end(), {"--cluster-slots", std::to_string(slots), "--cluster-pipeline",
                           std::to_string(keys_per_migrate), "--cluster-yes"});
  const auto auth = auth_args();
  args.insert(args.end(), auth.begin(), auth.end());
  const std::string output = run_redis_cli(args);
  if (output.find("[ERR]") != std::string::npos) throw std::runtime_error("redis-cli --cluster reshard:\n" + output);
}

void RedisCluster::wait_until_ok(std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  std::string last;
  while (Clock::now() < deadline) {
    bool all_ok = true;
    for (const auto& node : m_nodes) {
      if (!node->running()) continue;
      last = node->cli({"CLUSTER", "INFO"});
      if (!says_ok(last)) {
        all_ok = false;
        break;
      }
    }
    if (all_ok) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("RedisCluster: the cluster is not ok in time; a node says:\n" + last);
}

}  // namespace jitcache::testing
