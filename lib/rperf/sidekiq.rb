# frozen_string_literal: true
#
# rperf/sidekiq.rb: Sidekiq server middleware for workers run under
# `rperf record`.
#
#   Rperf::Sidekiq.install                            # job and queue labels
#   Rperf::Sidekiq.install(slow: 2, dir: "tmp/rperf") # + a profile per slow job
#
# or by hand, in Sidekiq.configure_server:
#
#   config.server_middleware { |chain| chain.add Rperf::Sidekiq, slow: 2, dir: "tmp/rperf" }
#
# Every time sample of a job is labelled job=CLASS (the ActiveJob class for
# a wrapped job), queue=QUEUE and job_status=ok or error; a job of at least
# slow: seconds gets a profile file of its own in dir: (the newest keep:,
# default 100, are kept).  Sidekiq makes a middleware object per job, so
# the settings and their directory are shared by every object made with
# the same options.

require_relative "capture"

module Rperf
  class Sidekiq
    LOGS = {} # options -> SlowLog
    LOGS_LOCK = Mutex.new

    # Add this middleware to Sidekiq's server chain (in the process that
    # runs jobs only; a client process is left alone).
    def self.install(**options)
      SlowLog.new("Rperf::Sidekiq", **options) # complain now, not at the first job
      ::Sidekiq.configure_server do |config|
        config.server_middleware { |chain| chain.add(self, options) }
      end
      self
    end

    def self.log_for(options)
      LOGS_LOCK.synchronize do
        LOGS[options] ||= SlowLog.new("Rperf::Sidekiq", **options)
      end
    end

    # Sidekiq 6 passes chain.add's arguments positionally (a Hash), later
    # ones as keywords: both are taken.
    def initialize(options = nil, **keywords)
      options = (options || {}).transform_keys(&:to_sym).merge(keywords)
      @log = self.class.log_for(options)
      @enabled = SlowLog.captures?
    end

    def call(worker, job, queue)
      return yield unless @enabled

      name = job["wrapped"] || job["class"] || worker.class.name
      JobCapture.run(@log, name.to_s, queue.to_s) { yield }
    end
  end
end
