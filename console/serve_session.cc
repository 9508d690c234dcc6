#include "console/serve_session.h"

#include "console/serve_server.h"
#include "control/client_opening.h"
#include "daemons/log.h"
#include "text/shortened.h"

namespace sluice::console {

using control::Envelope;
namespace dlog = daemon;

namespace {

// A client's session logs its opening at debug level (serve logs each unit instead), says
// its whole reason when it drops a client, and lingers after its last word.
const control::TlsSession::Style kClientStyle{.peer = "client",
                                             .host = control::kServeAuthHost,
                                             .silence = "no word from the client for 3 s",
                                             .authenticated_log = dlog::Level::kDebug,
                                             .short_reasons = false,
                                             .linger = true,
                                             .tls_speakers = "sluice submit, sluice stop and the Application API "
                                                             "speak TLS 1.3 on this port; the live view and its "
                                                             "/metrics are on serve's --ui address"};

}  // namespace

ServeSession::ServeSession(boost::asio::ip::tcp::socket socket, ServeServer& server, std::uint64_t id,
                           control::Admission::Ticket ticket)
    : TlsSession(std::move(socket), server.tls_server(), id, std::move(ticket), kClientStyle),
      server_(server),
      protocol_(*this, *this) {}

void ServeSession::ending(const std::string& why) {
  if (job_ && !unit_ended_) {
    dlog::warn(label() + ": " + why + " before unit " + std::to_string(job_->index()) + " ended; cancelling it");
    job_->abandon(why);
  } else if (job_ && queued_bytes() > 0) {
    // The unit ended, but the client never got the end of it: its submit exits 1.
    dlog::warn(label() + ": " + why + " with " + std::to_string(queued_bytes()) + " bytes of unit " +
               std::to_string(job_->index()) + "'s results and report not yet sent; its client does not get them");
  } else if (authenticated()) {
    dlog::debug(label() + ": closing: " + why);
  }
}

void ServeSession::written(std::size_t results) {
  if (job_) job_->written(results);
}

std::chrono::steady_clock::duration ServeSession::write_stall_limit() const {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(server_.limits().client_read_timeout));
}

void ServeSession::close(const std::string& why, bool after_reply) {
  if (!after_reply) return fail("protocol error: " + why, "protocol error");
  close_after_queue(why);
}

void ServeSession::deliver(std::string frame) {
  boost::asio::post(server_.io(), [self = self<ServeSession>(), frame = std::move(frame)]() mutable {
    const std::size_t size = frame.size();
    self->write(std::move(frame), size);
  });
}

void ServeSession::ended(const UnitReport& report) {
  boost::asio::post(server_.io(), [self = self<ServeSession>(), report] {
    self->unit_ended_ = true;
    if (self->stopped()) return;
    Envelope e;
    control::UnitEnded* m = e.mutable_unit_ended();
    m->set_index(report.index);
    m->set_work(text::shortened(report.work, 200));  // all submit prints; the whole may be 16 MiB
    m->set_finished(report.finished);
    m->set_seconds(report.seconds);
    if (!report.finished) {
      control::Failure* f = m->mutable_failure();
      f->set_filter(report.filter);
      f->set_copy(report.copy);
      f->set_host(report.host);
      f->set_unit(report.index);
      f->set_stage(report.stage);
      f->set_message(report.message);
      f->set_crash(report.crash);
      for (const std::string& host : report.partial_counts) m->add_partial_counts(host);
    }
    for (const UnitStreamCount& s : report.streams) {
      control::UnitStream* stream = m->add_streams();
      stream->set_stream(s.stream);
      stream->set_buffers(s.buffers);
      stream->set_bytes(s.bytes);
    }
    self->send(e);
    self->close_after_queue("unit " + std::to_string(report.index) + " ended");
  });
}

void ServeSession::stopping(std::uint32_t units_left, bool stopped) {
  Envelope e;
  e.mutable_stopping()->set_units_left(units_left);
  e.mutable_stopping()->set_stopped(stopped);
  send(e);
}

// --- ServeProtocol::Handler -------------------------------------------------------------------

std::optional<std::string> ServeSession::submit(const std::string& work) {
  std::uint64_t ahead = 0;
  std::string refusal;
  job_ = server_.submit(self<ServeSession>(), work, &ahead, &refusal);
  if (!job_) return refusal;
  Envelope e;
  e.mutable_accepted()->set_index(job_->index());
  e.mutable_accepted()->set_ahead(static_cast<std::uint32_t>(ahead));
  send(e);
  return std::nullopt;
}

void ServeSession::stop() { server_.stop_requested(self<ServeSession>()); }

}  // namespace sluice::console
