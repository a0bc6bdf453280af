// Healer: the remote heals itself (docs/operations.md "A fleet", docs/remote-layout.md "Wants").
// A remote loses entries a builder still holds locally: Redis restarted empty, its LRU evicted them,
// an upload failed during an outage, or the builders moved to a new signing key. Two things bring
// them back, both through one thread, at most `rate` re-uploads a second:
//   - a consumer whose lookup missed in the remotes appends the key's id to the remote's `wants`
//     queue (one short note; a key at most once per k_want_memo);
//   - a builder takes the notes off that queue every k_tick and re-uploads, signed with its own key,
//     each key it holds in its local shared namespace (the note says the fleet lacks it, or cannot
//     use what it has: a damaged image is overwritten too); and of its own local hits it checks
//     that the remote still has a record this fleet can use (present and verifying), and re-uploads
//     those that are not, each key at most once per k_check_memo.
// Offers from the serving threads are a lock and a bounded deque push, never a network call.
// Thread safety: offer_hit, offer_miss from any thread; the thread is the object's own.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>

#include <daemon/remote/remote_tier.hpp>
#include <daemon/store/store.hpp>

namespace jitcache::daemon::remote {

class Healer {
 public:
  // `local`: the builder's local store (never the tiered one); `rate`: re-uploads a second at most
  // (0: this host neither heals nor asks for heals).
  Healer(RemoteTier& tier, store::Store& local, unsigned rate);
  ~Healer();
  Healer(const Healer&) = delete;
  Healer& operator=(const Healer&) = delete;

  // A builder served this entry from its local shared namespace.
  void offer_hit(const store::Selector& selector);
  // A consumer found the entry in no remote.
  void offer_miss(const store::Selector& selector);

 private:
  struct Note {
    bool fast = false;  // a fast key id, not a key id
    proto::Digest256 id{};
  };
  static Note note_of(const store::Selector& selector);
  void loop();
  void send_wants(std::deque<Note>& wants);
  void take_wants(unsigned& budget);
  // Re-uploads the local entry `note` names (when `unless_usable`, only where the remote has no
  // record this fleet can use); false when this host does not hold it.
  bool heal(const Note& note, bool unless_usable);
  bool remote_usable(const store::Hit& hit);
  bool remembered(std::map<proto::Digest256, Clock::time_point>& memo, const proto::Digest256& id,
                  Clock::duration for_how_long);
  void refused(const common::Error& error, std::string_view what, std::string_view commands);

  RemoteTier& m_tier;
  store::Store& m_local;
  const unsigned m_rate;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<Note> m_hits;                                  // builder: local hits to check
  std::deque<Note> m_wants;                                 // consumer: misses to ask for
  std::map<proto::Digest256, Clock::time_point> m_offered;  // under m_mutex: recently queued
  std::map<proto::Digest256, Clock::time_point> m_healed;   // loop thread only: recently re-uploaded
  bool m_stopping = false;
  std::atomic<bool> m_queue_refused{false};  // the remote keeps no wants queue for this host
  std::thread m_thread;
};

}  // namespace jitcache::daemon::remote
