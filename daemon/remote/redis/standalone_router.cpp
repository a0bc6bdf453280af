#include <daemon/remote/redis/command_router.hpp>

#include <span>
#include <string>

#include <hiredis/hiredis.h>

namespace jitcache::daemon::remote {

namespace {

class StandaloneRouter final : public CommandRouter {
 public:
  explicit StandaloneRouter(RedisNode* node) : m_node(node) {}

  common::Result<RoutedReply> execute(int /*slot*/, const RedisCommand& command, const ReplyLimit& limit,
                                      Deadline deadline) override {
    JITCACHE_TRY_ASSIGN(auto replies, m_node->run(std::span(&command, 1), limit, deadline));
    ReplyPtr reply = std::move(replies.front());
    if (is_error_reply(*reply)) {
      const auto text = reply_text(*reply);
      if (text.starts_with("MOVED ") || text.starts_with("ASK ") || text.starts_with("CLUSTERDOWN")) {
        return common::make_error(common::ErrorCode::io, "redis " + m_node->name() +
                                                             " is a Redis Cluster node: name the remote "
                                                             "redis+cluster://host:port,... (it answered -" +
                                                             printable_excerpt(text, 80) + ")");
      }
    }
    return RoutedReply{std::move(reply), m_node};
  }

  common::Result<std::vector<RedisNode*>> serving_nodes(Deadline /*deadline*/) override {
    return std::vector<RedisNode*>{m_node};
  }

 private:
  RedisNode* m_node;
};

}  // namespace

std::unique_ptr<CommandRouter> make_standalone_router(const RedisSettings& settings, NodeDirectory& nodes) {
  return std::make_unique<StandaloneRouter>(nodes.node(settings.nodes.front()));
}

}  // namespace jitcache::daemon::remote
