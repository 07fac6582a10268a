# frozen_string_literal: true
#
# rperf/active_job.rb: an around_perform for ActiveJob classes run under
# `rperf record`.
#
#   class ApplicationJob < ActiveJob::Base
#     include Rperf::ActiveJob
#   end
#   Rperf::ActiveJob.configure(slow: 2, dir: "tmp/rperf")   # optional
#
# Every time sample of perform is labelled job=CLASS, queue=QUEUE and
# job_status=ok or error, whichever adapter runs it (inline, async, Sidekiq:
# under Rperf::Sidekiq too, the labels agree); a job of at least slow:
# seconds gets a profile file of its own in dir:, as for Rperf::Sidekiq.

require_relative "capture"

module Rperf
  module ActiveJob
    @log = SlowLog.new("Rperf::ActiveJob")

    class << self
      attr_reader :log

      # Slow-job profiles for every class that includes this module.
      def configure(slow: nil, dir: nil, keep: 100)
        @log = SlowLog.new("Rperf::ActiveJob", slow: slow, dir: dir, keep: keep)
        self
      end

      def included(base)
        super
        return unless SlowLog.captures?

        base.around_perform do |job, block|
          JobCapture.run(Rperf::ActiveJob.log, job.class.name.to_s, job.queue_name.to_s) { block.call }
        end
      end
    end
  end
end
