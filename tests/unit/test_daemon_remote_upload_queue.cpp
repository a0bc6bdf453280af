// UploadQueue: bounded in entries and bytes; what does not fit is refused, not held.
#include <catch2/catch.hpp>

#include <thread>

#include <daemon/remote/upload_queue.hpp>

namespace {

using jitcache::daemon::remote::Upload;
using jitcache::daemon::remote::UploadQueue;

Upload upload_of(std::size_t bytes) {
  Upload u;
  u.image.assign(bytes, 0x5a);
  return u;
}

}  // namespace

TEST_CASE("upload queue: it refuses an entry past its entry bound") {
  UploadQueue queue(2, 1 << 20);
  CHECK(queue.push(upload_of(10)));
  CHECK(queue.push(upload_of(10)));
  CHECK_FALSE(queue.push(upload_of(10)));
  CHECK(queue.size() == 2);
}

TEST_CASE("upload queue: it refuses an entry past its byte bound, and takes it once room is made") {
  UploadQueue queue(100, 1000);
  CHECK(queue.push(upload_of(600)));
  CHECK_FALSE(queue.push(upload_of(600)));
  REQUIRE(queue.pop().has_value());
  CHECK(queue.push(upload_of(600)));
}

TEST_CASE("upload queue: stop wakes a waiting pop and drops what is queued") {
  UploadQueue queue(10, 1 << 20);
  std::optional<Upload> popped = upload_of(1);
  std::thread waiter([&] {
    popped = queue.pop();
    popped = queue.pop();
  });
  queue.push(upload_of(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(queue.stop() == 0);
  waiter.join();
  CHECK_FALSE(popped.has_value());
  CHECK_FALSE(queue.push(upload_of(1)));
}
