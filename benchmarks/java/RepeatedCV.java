// Weka's own repeated cross-validation of one learner over data files, in one Java VM,
// for benchmarks/bench_main_job.py (issue 30). Written for ensemblekit; no Weka code in it.
//
// Usage: java -cp weka.jar:DIR RepeatedCV FOLDS RUNS "CLASSIFIER [OPTIONS]" FILE...
//
// Each file is loaded, its last attribute made the class, and for run = 1..RUNS
// Evaluation.crossValidateModel(copy of the classifier, data, FOLDS, new Random(run)) is
// called: the loop the Experimenter runs for a cross-validation result producer. One line
// per file goes to standard output: its name, the mean over the runs of the percentage
// correctly classified, and the wall seconds the file took (loading included).

import java.util.Locale;
import java.util.Random;

import weka.classifiers.AbstractClassifier;
import weka.classifiers.Classifier;
import weka.classifiers.Evaluation;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;

public class RepeatedCV {
    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: RepeatedCV FOLDS RUNS \"CLASSIFIER [OPTIONS]\" FILE...");
            System.exit(2);
        }
        int folds = Integer.parseInt(args[0]);
        int runs = Integer.parseInt(args[1]);
        String[] spec = Utils.splitOptions(args[2]);
        String name = spec[0];
        spec[0] = "";
        Classifier template = AbstractClassifier.forName(name, spec);
        for (int f = 3; f < args.length; f++) {
            long start = System.nanoTime();
            Instances data = DataSource.read(args[f]);
            data.setClassIndex(data.numAttributes() - 1);
            double percent = 0;
            for (int run = 1; run <= runs; run++) {
                Evaluation evaluation = new Evaluation(data);
                evaluation.crossValidateModel(AbstractClassifier.makeCopy(template), data, folds,
                                              new Random(run));
                percent += evaluation.pctCorrect();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf(Locale.ROOT, "%s\t%.4f\t%.3f%n", args[f], percent / runs, seconds);
        }
    }
}
